"""A rejected row's line in the reconciliation report shows what its cells said, so the operator
can find and fix the row: its amount (when that cell broke no rule), paymentType and name."""

from __future__ import annotations

import codecs
import csv
from pathlib import Path

from payflow.intake import batch_from_rows
from payflow.intake.to_ledger import register_report
from payflow.ledger import Ledger
from payflow.reporting import write_batch_report
from payflow.schemas.validation import validate_rows

HEADER = ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"]


def test_a_rejected_row_shows_its_amount_payment_type_and_name(tmp_path: Path) -> None:
    rows = [
        # Rejected for its paymentType alone: its amount is valid and shown.
        ["card-2", "640.00", "RUB", "CARD", "4111111111111111", "Ivan Petrov", "u-2"],
        # Rejected for its amount: no amount is shown, the rest is.
        ["sim-3", "abc", "XOF", "SIM", "2250700003001", "Awa Kone", "u-3"],
        ["sim-4", "1500", "XOF", "SIM", "2250700004001", "Moussa Diop", "u-4"],
    ]
    report = validate_rows(batch_from_rows([HEADER, *rows]), services=None, banks_for_phones=None)
    assert sorted({p.row for p in report.rejects}) == [2, 3]
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        register_report(ledger, report)
        written = write_batch_report(ledger, report.batch_id, tmp_path, sandbox=True)
    assert written.csv.read_bytes().startswith(codecs.BOM_UTF8)
    with written.csv.open(newline="", encoding="utf-8-sig") as handle:
        lines = {line["source_row"]: line for line in csv.DictReader(handle)}
    shown = ("outcome", "payment_type", "currency", "amount_asked", "recipient_name")
    assert {n: tuple(lines[n][c] for c in shown) for n in ("2", "3", "4")} == {
        "2": ("rejected", "CARD", "RUB", "640.00", "Ivan Petrov"),
        "3": ("rejected", "SIM", "XOF", "", "Awa Kone"),
        "4": ("not_sent", "SIM", "XOF", "1500", "Moussa Diop"),
    }
    # Still never sent.
    assert lines["2"]["payout_id"] == lines["2"]["submitted_at_utc"] == ""


def test_rejected_rows_show_their_requisites_masked_and_the_ledger_keeps_no_more(
    tmp_path: Path,
) -> None:
    rows = [
        # Two rows rejected for their amount, to two recipients: told apart by the tail alone.
        ["sim-2", "abc", "XOF", "SIM", "2250700002001", "Awa Kone", "u-2"],
        ["sim-3", "abc", "XOF", "SIM", "2250700003001", "Awa Kone", "u-2"],
        # Rejected for its requisites: still shown masked, never whole.
        ["sbp-4", "100", "RUB", "SBP", "+7 916 123-45-67", "Ivan Petrov", "u-4"],
    ]
    report = validate_rows(batch_from_rows([HEADER, *rows]), services=None, banks_for_phones=None)
    ledger_path = tmp_path / "ledger.sqlite3"
    with Ledger.open(f"sqlite:///{ledger_path}") as ledger:
        register_report(ledger, report)
        written = write_batch_report(ledger, report.batch_id, tmp_path, sandbox=True)
    with written.csv.open(newline="", encoding="utf-8-sig") as handle:
        lines = {line["source_row"]: line for line in csv.DictReader(handle)}
    assert {n: lines[n]["requisites_masked"] for n in ("2", "3", "4")} == {
        "2": "*********2001",
        "3": "*********3001",
        "4": "************5-67",
    }
    stored = b"".join(p.read_bytes() for p in tmp_path.glob("ledger.sqlite3*"))
    written_out = written.csv.read_bytes() + written.xlsx.read_bytes()
    for whole in ("2250700002001", "2250700003001", "916 123-45"):
        assert whole.encode() not in stored + written_out


def test_a_conflicting_row_shows_its_own_requisites_masked(tmp_path: Path) -> None:
    first = [["sim-2", "1500", "XOF", "SIM", "2250700002001", "Awa Kone", "u-2"]]
    # Same externalId, another recipient: a CONFLICT, whose line shows its own tail.
    again = [["sim-2", "1500", "XOF", "SIM", "2250700009009", "Awa Kone", "u-2"]]
    with Ledger.open(f"sqlite:///{tmp_path / 'ledger.sqlite3'}") as ledger:
        for rows in (first, again):
            report = validate_rows(
                batch_from_rows([HEADER, *rows]), services=None, banks_for_phones=None
            )
            register_report(ledger, report)
        written = write_batch_report(ledger, report.batch_id, tmp_path, sandbox=True)
    with written.csv.open(newline="", encoding="utf-8-sig") as handle:
        (line,) = list(csv.DictReader(handle))
    assert (line["outcome"], line["requisites_masked"]) == ("refused", "*********9009")
