"""The shell blocks the docs mark runnable work as written: the getting-started path end to end
(template, validate, run, status, a failed payout, reconcile) against the sandbox.

A block is runnable when `<!-- runnable -->` stands on the line before its ```bash fence, or
`<!-- runnable: exit N -->` when it ends with exit status N. A page's runnable blocks run in
one bash, in order, so a variable or a server one block starts serves the next.
"""

from __future__ import annotations

import os
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest
from cli_support import payflow_env
from support.servers import free_port

from payflow.docs_pages import DOCS, runnable_blocks

DOCS_PORT = "8080"  # the port the docs name; the test serves on a free one instead


def _script(blocks: list[tuple[str, int]], port: int) -> str:
    """One bash script: each block a function, run in turn, its status printed after it."""
    lines = ["trap 'kill $(jobs -p) 2>/dev/null' EXIT"]  # only when a block failed first
    for n, (body, _) in enumerate(blocks):
        lines += [f"block_{n}() {{", body.replace(DOCS_PORT, str(port)).rstrip(), "}"]
    for n, (body, _) in enumerate(blocks):
        lines.append(f'block_{n}; echo "::block {n} exit $?"')
        if "payflow sandbox --port" in body:  # a reader waits for its URL before going on
            lines.append(
                "for _ in $(seq 300); do (exec 3<>/dev/tcp/127.0.0.1/"
                f"{port}) 2>/dev/null && break; sleep 0.2; done"
            )
    # The page stops what it starts: the script ends when its servers have stopped.
    lines.append("wait")
    return "\n".join(lines) + "\n"


def _run_page(page: str, tmp_path: Path) -> tuple[subprocess.CompletedProcess[str], Path, str]:
    """Run the page's runnable blocks in a folder holding a copy of the checkout's `data/` (the
    pages' samples), with the test process's Prefect server; check each block's exit status."""
    blocks = runnable_blocks((DOCS / page).read_text("utf-8"))
    env = payflow_env(tmp_path / "unused", tmp_path / "prefect")
    del env["PAYFLOW_HOME"]  # the page's own default: .payflow in the folder it runs in
    env["PATH"] = f"{Path(sys.executable).parent}{os.pathsep}{env['PATH']}"
    work = tmp_path / "work"
    shutil.copytree(DOCS.parent / "data", work / "data")
    done = subprocess.run(
        ["bash", "-c", _script(blocks, free_port())],
        cwd=work,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    shown = f"stdout:\n{done.stdout}\nstderr:\n{done.stderr}"
    statuses = [int(n) for n in re.findall(r"^::block \d+ exit (\d+)$", done.stdout, re.M)]
    assert statuses == [code for _, code in blocks], shown
    assert "Traceback" not in done.stderr, shown
    return done, work, shown


@pytest.mark.slow  # four pay runs and two sandboxes: about 80 s
def test_the_getting_started_blocks_run_as_written(tmp_path: Path) -> None:
    assert len(runnable_blocks((DOCS / "getting-started.md").read_text("utf-8"))) >= 6
    done, work, shown = _run_page("getting-started.md", tmp_path)
    assert "COMPLETED        2" in done.stdout, shown  # payflow status of the first batch
    assert "Recipient not found" in done.stdout + done.stderr, shown
    assert list((work / ".payflow" / "reports").glob("*-reconciliation.xlsx")), shown
    assert list((work / ".payflow-sandbox" / "reports").glob("*-reconciliation.xlsx")), shown


OTHER_PAGES = sorted(
    page.relative_to(DOCS).as_posix()
    for page in DOCS.rglob("*.md")
    if page.name != "getting-started.md" and runnable_blocks(page.read_text("utf-8"))
)


@pytest.mark.parametrize("page", OTHER_PAGES)
def test_every_other_page_s_runnable_blocks_run_as_written(page: str, tmp_path: Path) -> None:
    _run_page(page, tmp_path)
