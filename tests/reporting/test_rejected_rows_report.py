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
