"""A full disk under `--out` after recipients were paid through their links (issue 36, item 4):
`payflow links report` prints its figures from the ledger, says in one line why the report was
not written and the command that writes it, exit 1 (it was exit 2, "unexpected error"); no
partial file is left."""

from __future__ import annotations

from pathlib import Path

import httpx
import pytest
from cli.cli_support import payflow_env, run_payflow
from links_support import pay_through_widget, read_claims, write_links_file
from pydantic import SecretStr

# Its payflow run uses one Prefect server, as tests/cli's do.
from support.full_disk import full_folder, leftovers
from support.shared_prefect import shared_prefect_server  # noqa: F401
from support.stats import sandbox_stats
from support.waiting import sandbox_is_idle, wait_until

from payflow.api import PayoutsClient
from payflow.links.batch import issue_claims_file, register_links
from payflow.links.rows import read_link_rows
from payflow.links.server import ClaimsServer
from payflow.links.store import LinkStore

__all__ = ["full_folder"]


# A links batch paid through the widget, then `payflow links report` (a Prefect flow).
@pytest.mark.timeout(600)
@pytest.mark.slow
def test_a_links_report_after_payouts_ends_1_with_its_figures(
    tmp_path: Path, full_folder: Path, make_sandbox
) -> None:
    home, sandbox = tmp_path / "home", make_sandbox()
    store = LinkStore.open(f"sqlite:///{(home / 'ledger.sqlite3').resolve()}")
    report = read_link_rows(
        write_links_file(tmp_path / "gifts.csv", [("paid-1", "anna", "25", "")])
    )
    registered = register_links(store, report)
    issued = issue_claims_file(
        store, report.batch_id, registered.new, out_dir=tmp_path, base_url="https://x", days=7
    )
    assert issued.path is not None
    url = read_claims(Path(issued.path))["paid-1"]
    with (
        PayoutsClient(sandbox.token, base_url=sandbox.url) as client,
        ClaimsServer(store, client, SecretStr(sandbox.token), sandbox.url) as server,
    ):
        widget_link = httpx.get(url.replace("https://x", server.url)).headers["location"]
        assert pay_through_widget(widget_link, "0042")["created"] is True
    store.close()
    wait_until(lambda: sandbox_is_idle(sandbox_stats(sandbox.url)), what="final statuses")
    env = payflow_env(
        home, tmp_path / "prefect", PAYFLOW_API_URL=sandbox.url, PAYFLOW_API_TOKEN=sandbox.token
    )

    done = run_payflow(
        ["links", "report", report.batch_id, "--out", str(full_folder)], env, tmp_path
    )

    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "unexpected error" not in done.stderr, done.stderr
    assert "    COMPLETED      1" in done.stdout.splitlines(), done.stdout
    lines = [line for line in done.stdout.splitlines() if line.startswith("report not written")]
    assert len(lines) == 1, done.stdout
    assert f"report not written to {full_folder}: no space left on device" in lines[0]
    assert f"`payflow links report {report.batch_id} --out DIR`" in lines[0]
    assert leftovers(full_folder) == []
    assert sandbox_stats(sandbox.url)["payoutsByExternalId"] == {"paid-1": 1}


# `payflow links FILE` on the embedded sandbox (its claims file, a flow), then `--reissue`.
@pytest.mark.timeout(600)
def test_a_claims_file_on_a_full_disk_issues_nothing_and_reissue_writes_it(
    tmp_path: Path, full_folder: Path
) -> None:
    home = tmp_path / "home"
    env = payflow_env(home, tmp_path / "prefect", PAYFLOW_USER="olga")
    rows = [("gift-1", "anna", "25", ""), ("gift-2", "boris", "30", "")]
    links = write_links_file(tmp_path / "gifts.csv", rows)

    done = run_payflow(["links", str(links), "--out", str(full_folder)], env, tmp_path)

    # The claims were stored before their file was written: the URLs were nowhere, and
    # `--reissue` skipped rows with a live claim, so the recipients waited for its expiry.
    assert done.returncode == 1, done.stdout + done.stderr
    assert "Traceback" not in done.stderr and "unexpected error" not in done.stderr, done.stderr
    batch_id = done.stdout.split()[2]
    said = [line for line in done.stdout.splitlines() if line.startswith("claims not written")]
    assert said == [
        f"claims not written to {full_folder}: no space left on device; none was issued, issue "
        f"them with `payflow links --reissue {batch_id} --out DIR` (DIR: a folder it can be "
        "written to)"
    ], done.stdout
    assert leftovers(full_folder) == []
    store = LinkStore.open(f"sqlite:///{(home / 'ledger.sqlite3').resolve()}")
    assert [view.last_issued_at for view in store.rows(batch_id)] == [None, None]
    store.close()

    out = tmp_path / "out"
    again = run_payflow(["links", "--reissue", batch_id, "--out", str(out)], env, tmp_path)

    assert again.returncode == 0, again.stdout + again.stderr
    [claims] = out.glob(f"{batch_id}-claims-*.csv")
    assert sorted(read_claims(claims)) == ["gift-1", "gift-2"]
