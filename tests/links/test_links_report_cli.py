"""`payflow links report` counts payouts, not only claims: a used claim whose payout failed is
named with its statusMessage, and the command exits 0 only when every recipient was paid."""

from __future__ import annotations

import json
from pathlib import Path

import httpx
import pytest
from cli.cli_support import payflow_env, run_payflow
from links_support import pay_through_widget, read_claims, write_links_file
from openpyxl import load_workbook
from pydantic import SecretStr

# Its payflow runs use one Prefect server, as tests/cli's do: five temporary ones took minutes.
from support.shared_prefect import shared_prefect_server  # noqa: F401
from support.stats import sandbox_stats
from support.waiting import sandbox_is_idle, wait_until

from payflow.api import PayoutsClient
from payflow.links.batch import issue_claims_file, register_links
from payflow.links.rows import read_link_rows
from payflow.links.server import ClaimsServer
from payflow.links.store import LinkStore
from payflow.reporting.workbook import NO_REAL_MONEY_NOTE
from payflow.runtime import NO_REAL_MONEY


@pytest.mark.slow
def test_a_used_claim_whose_payout_failed_is_not_reported_as_done(
    tmp_path: Path, make_sandbox
) -> None:
    home = tmp_path / "home"
    sandbox = make_sandbox()
    store = LinkStore.open(f"sqlite:///{(home / 'ledger.sqlite3').resolve()}")
    rows = [("paid-1", "anna", "2500", ""), ("blocked-1", "vera", "10", "")]
    report = read_link_rows(write_links_file(tmp_path / "gifts.csv", rows))
    registered = register_links(store, report)
    issued = issue_claims_file(
        store, report.batch_id, registered.new, out_dir=tmp_path, base_url="https://x", days=7
    )
    assert issued.path is not None
    urls = read_claims(Path(issued.path))
    with (
        PayoutsClient(sandbox.token, base_url=sandbox.url) as client,
        ClaimsServer(store, client, SecretStr(sandbox.token), sandbox.url) as server,
    ):
        for external_id, last4 in (("paid-1", "0042"), ("blocked-1", "1111")):
            local = urls[external_id].replace("https://x", server.url)
            widget_link = httpx.get(local).headers["location"]
            assert pay_through_widget(widget_link, last4)["created"] is True
    store.close()
    wait_until(lambda: sandbox_is_idle(sandbox_stats(sandbox.url)), what="final statuses")

    env = payflow_env(
        home, tmp_path / "prefect", PAYFLOW_API_URL=sandbox.url, PAYFLOW_API_TOKEN=sandbox.token
    )
    done = run_payflow(["links", "report", report.batch_id], env, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    lines = done.stdout.splitlines()
    assert "  USED             2" in lines
    assert "    COMPLETED      1" in lines and "    FAILED         1" in lines
    assert (
        "  not paid: row 3: externalId 'blocked-1': FAILED: Recipient account is blocked" in lines
    )


def test_a_report_of_an_unknown_links_batch_is_one_line_not_an_empty_report(
    tmp_path: Path,
) -> None:
    # It wrote an empty nosuchbatch-links.csv/xlsx and exited 1, as if nobody had been paid;
    # then it said so only after the embedded sandbox and a Prefect flow had started (the
    # sandbox's line first). `--reissue` did the same.
    home = tmp_path / "home"
    env = payflow_env(home, tmp_path / "prefect")
    for command in (["links", "report", "nosuchbatch"], ["links", "--reissue", "nosuchbatch"]):
        done = run_payflow([*command, "--out", str(tmp_path / "out")], env, tmp_path)
        assert (done.returncode, done.stdout) == (2, ""), command
        assert done.stderr == f"payflow: no batch 'nosuchbatch' in the ledger at {home}\n"
    assert not list((tmp_path / "out").glob("*links*"))
    assert "flow run" not in (home / "logs" / "payflow.log").read_text(encoding="utf-8")


def test_a_rewritten_report_keeps_the_rows_the_file_had_rejected(tmp_path: Path) -> None:
    # `payflow links report` rewrote the report without the rejected rows the first one listed:
    # the operator lost the only list of what to fix in the file.
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    out = tmp_path / "out"
    # Row 4's serviceId 101 is the SBP service, which the widget refuses: its claim opened on
    # an error page, so the issue run asks the services list and rejects it.
    rows = [
        ("gift-1", "anna", "25", ""),
        ("gift-2", "vera", "not a number", ""),
        ("gift-3", "olga", "25", "101"),
    ]
    links_file = write_links_file(tmp_path / "gifts.csv", rows)
    issued = run_payflow(["links", str(links_file), "--out", str(out), "--json"], env, tmp_path)
    assert issued.returncode == 1, issued.stdout + issued.stderr[-2000:]
    batch_id = json.loads(issued.stdout)["batch_id"]
    # Issued on the embedded sandbox it said nothing of it, as report and --reissue do: claim
    # URLs for real recipients could go out from a ledger whose payouts no service will make.
    assert NO_REAL_MONEY in issued.stderr.splitlines()
    first_csv = (out / f"{batch_id}-links.csv").read_text("utf-8-sig")
    first_rejected = _rejected_sheet(out / f"{batch_id}-links.xlsx")
    assert [line[0] for line in first_rejected] == [3, 4]
    assert "serviceId 101 is a SBP service" in str(first_rejected[1])
    # The workbook said nothing of the sandbox, as the reconciliation and refunds ones do.
    assert _summary_note(out / f"{batch_id}-links.xlsx") == NO_REAL_MONEY_NOTE

    done = run_payflow(["links", "report", batch_id, "--out", str(out)], env, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    again_csv = (out / f"{batch_id}-links.csv").read_text("utf-8-sig")
    assert again_csv == first_csv
    assert "3,gift-2,,,,REJECTED," in again_csv.splitlines()[2]
    assert _rejected_sheet(out / f"{batch_id}-links.xlsx") == first_rejected
    assert "  rejected in the file: 2 rows (listed in the report)" in done.stdout.splitlines()
    assert _summary_note(out / f"{batch_id}-links.xlsx") == NO_REAL_MONEY_NOTE

    # A reissue with no claim expired said nothing of claims: read as a file written elsewhere.
    claims_files = sorted(out.glob("*claims*"))
    reissued = run_payflow(["links", "--reissue", batch_id, "--out", str(out)], env, tmp_path)
    assert reissued.returncode == 1, reissued.stdout + reissued.stderr[-2000:]
    lines = reissued.stdout.splitlines()
    assert "claims: none reissued: no unused claim of this batch has expired" in lines
    assert sorted(out.glob("*claims*")) == claims_files
    assert _rejected_sheet(out / f"{batch_id}-links.xlsx") == first_rejected


def _summary_note(path: Path) -> object:
    notes = [line for line in load_workbook(path)["Summary"].iter_rows(values_only=True)]
    return next((line[1] for line in notes if line[0] == "note"), None)


def _rejected_sheet(path: Path) -> list[tuple[object, ...]]:
    book = load_workbook(path)
    assert "Rejected" in book.sheetnames, book.sheetnames
    return list(book["Rejected"].iter_rows(min_row=2, values_only=True))


def test_a_report_accounts_for_every_row_of_its_file(tmp_path: Path) -> None:
    # A row whose externalId had a link from an earlier file was missing from the new file's
    # report, and `links report --json` said rows 0, rejected 0 for a file with a rejected row.
    home = tmp_path / "home"
    env = payflow_env(home, tmp_path / "prefect")
    out = tmp_path / "out"
    # The earlier file's link is only the ground this test stands on: issued in-process, as the
    # issue flow does (register, then a claim), not by a `payflow links` of its own (a process
    # and a flow run, 4 s of CPU).
    first = read_link_rows(write_links_file(tmp_path / "first.csv", [("gift-1", "anna", "25", "")]))
    store = LinkStore.open(f"sqlite:///{(home / 'ledger.sqlite3').resolve()}")
    registered = register_links(store, first)
    issue_claims_file(
        store, first.batch_id, registered.new, out_dir=out, base_url="https://x", days=7
    )
    store.close()
    first_batch = first.batch_id
    rows = [("gift-1", "anna", "25", ""), ("gift-2", "vera", "30", ""), ("gift-3", "ivan", "x", "")]
    second = write_links_file(tmp_path / "second.csv", rows)
    issued = run_payflow(["links", str(second), "--out", str(out), "--json"], env, tmp_path)
    batch_id = json.loads(issued.stdout)["batch_id"]

    done = run_payflow(["links", "report", batch_id, "--out", str(out), "--json"], env, tmp_path)
    assert done.returncode == 1, done.stdout + done.stderr[-2000:]
    summary = json.loads(done.stdout)
    assert (summary["rows"], summary["rejected"], summary["already_known"]) == (3, 1, 1)
    lines = (out / f"{batch_id}-links.csv").read_text("utf-8-sig").splitlines()
    header = lines[0].split(",")
    cells = [dict(zip(header, line.split(","), strict=False)) for line in lines[1:]]
    assert [(c["row"], c["externalId"], c["claim"]) for c in cells] == [
        ("2", "gift-1", "OPEN"),
        ("3", "gift-2", "OPEN"),
        ("4", "gift-3", "REJECTED"),
    ]
    assert [c["linkBatch"] for c in cells] == [first_batch, "", ""]
    links = list(load_workbook(out / f"{batch_id}-links.xlsx")["Links"].iter_rows(values_only=True))
    assert [line[:2] for line in links[1:]] == [(2, "gift-1"), (3, "gift-2")]
    assert links[1][-1] == first_batch

    # The same file again is its own rows, not rows known from an earlier batch.
    run_payflow(["links", str(second), "--out", str(out), "--json"], env, tmp_path)
    done = run_payflow(["links", "report", batch_id, "--out", str(out), "--json"], env, tmp_path)
    assert json.loads(done.stdout)["already_known"] == 1


def test_a_russian_excel_file_says_its_amounts_were_read_so_as_a_payout_file_does(
    tmp_path: Path,
) -> None:
    # `1 250,50` in a `;` file was read as 1250.50 with no word, while a payout run of the same
    # Excel's file says how its amounts were read.
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    path = tmp_path / "russian.csv"
    path.write_text("externalId;userId;amount\nru-1;anna;1 250,50\nru-2;vera;30\n", "utf-8")
    done = run_payflow(["links", str(path), "--out", str(tmp_path / "out")], env, tmp_path)
    assert done.returncode == 0, done.stdout + done.stderr[-2000:]
    assert (
        "  warning: 1 amount(s) were read in the Russian Excel form of a ;-separated file: "
        "decimal comma and space thousands separators (1 500,50 read as 1500.50)"
    ) in done.stdout.splitlines()
    as_json = run_payflow(["links", str(path), "--json"], env, tmp_path)
    assert json.loads(as_json.stdout)["notices"][0].startswith("1 amount(s) were read")
