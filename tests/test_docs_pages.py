"""The docs cannot rot unnoticed: the generated blocks are what the code says now, every picture
a page shows exists and a test takes it, the README stays a short front door, and the sandbox's
help says how to make payouts fail."""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

import pytest

from payflow.cli import main
from payflow.docs_pages import (
    BLOCKS,
    DOCS,
    RUNNABLE_MARKER,
    runnable_blocks,
    stale_pages,
    with_block,
    write_pages,
)
from payflow.sandbox.payouts import OUTCOMES

ROOT = DOCS.parent
PICTURE = re.compile(r"!\[[^\]]*\]\(([^)\s]+\.png)\)")


def test_the_generated_blocks_are_current() -> None:
    assert stale_pages() == [], "run `.venv/bin/python -m payflow.docs_pages`"


def test_writing_the_pages_rewrites_a_stale_block_only(tmp_path: Path) -> None:
    for block in BLOCKS:
        page = tmp_path / block.page
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text((DOCS / block.page).read_text("utf-8"), "utf-8")
    settings = tmp_path / "reference" / "settings.md"
    fresh = settings.read_text("utf-8")
    settings.write_text(fresh.replace("`PAYFLOW_CHUNK_SIZE`", "`PAYFLOW_CHUNKS`"), "utf-8")
    assert stale_pages(tmp_path) == ["reference/settings.md"]
    assert write_pages(tmp_path) == ["reference/settings.md"]
    assert settings.read_text("utf-8") == fresh
    assert stale_pages(tmp_path) == []


def test_a_page_without_its_markers_is_named() -> None:
    with pytest.raises(ValueError, match=r"docs/columns\.md has no <!-- columns:start -->"):
        with_block("# Columns\n", BLOCKS[2])


def test_every_runnable_marker_starts_a_block_the_tests_run() -> None:
    # A marker whose block the pattern missed (another fence, a blank line between) runs nothing.
    for page in DOCS.rglob("*.md"):
        text = page.read_text("utf-8")
        assert len(RUNNABLE_MARKER.findall(text)) == len(runnable_blocks(text)), page
    started = (DOCS / "getting-started.md").read_text("utf-8")
    assert len(runnable_blocks(started)) >= 6


def test_a_marker_before_another_fence_is_not_a_runnable_block() -> None:
    text = "<!-- runnable -->\n```text\nls\n```\n<!-- runnable: exit 1 -->\n```bash\nfalse\n```\n"
    assert len(RUNNABLE_MARKER.findall(text)) == 2
    assert runnable_blocks(text) == [("false\n", 1)]


def _tests_source() -> str:
    """Every test module but this one, whose own words would name every picture."""
    here = Path(__file__).resolve()
    files = [p for p in (ROOT / "tests").rglob("*.py") if p.resolve() != here]
    return "\n".join(p.read_text("utf-8") for p in files)


def test_every_picture_a_page_shows_exists_and_a_test_takes_it() -> None:
    shown: set[str] = set()
    for page in DOCS.rglob("*.md"):
        for target in PICTURE.findall(page.read_text("utf-8")):
            picture = (page.parent / target).resolve()
            assert picture.is_file(), f"{page.relative_to(ROOT)} shows missing {target}"
            shown.add(picture.name)
    assert shown, "the operator guide shows the console's pages and the report"
    source = _tests_source()
    for name in sorted(shown):
        # `keep_for_docs(picture, "report-summary.png")`, or the console's `console-{name}.png`
        # from `_shots(..., "batch", for_docs=True)`.
        stem = name.removeprefix("console-").removesuffix(".png")
        taken = f'"{name}"' in source or f'"{stem}", for_docs=True' in source
        assert taken, f"docs/img/{name} is taken by no test (see tests/support/docs_images.py)"


def test_the_readme_is_a_front_door_whose_links_lead_somewhere() -> None:
    readme = (ROOT / "README.md").read_text("utf-8")
    assert len(readme.splitlines()) <= 200
    links = re.findall(r"\]\((docs/[^)#\s]+)(?:#[^)]*)?\)", readme)
    assert len(links) >= 8
    for link in links:
        assert (ROOT / link).is_file(), link


def test_the_sandbox_help_says_how_to_make_payouts_fail(
    capsys: pytest.CaptureFixture[str],
) -> None:
    with pytest.raises(SystemExit) as ended:
        main(["sandbox", "--help"])
    assert ended.value.code == 0
    shown = " ".join(capsys.readouterr().out.split())
    assert "Make payouts fail" in shown and "docs/sandbox.md" in shown
    assert "1111 FAILED (Recipient account is blocked)" in shown
    assert "6666 COMPLETED, then corrected to FAILED" in shown
    for end in OUTCOMES:
        assert f"{end} " in shown, end
    sandbox_page = (DOCS / "sandbox.md").read_text("utf-8")
    for end in OUTCOMES:
        assert f"| `{end}` |" in sandbox_page


def test_the_commands_page_does_not_depend_on_which_command_loaded_first() -> None:
    # CI failed once: another test in the same worker had imported a command's module first,
    # and the page's command list followed the import order.
    check = (
        "import payflow.cli.stop, payflow.cli.policy\n"
        "from payflow.docs_pages import stale_pages\n"
        "print(stale_pages())\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", check], capture_output=True, text=True, timeout=120, check=True
    )
    assert done.stdout.strip() == "[]", done.stderr
