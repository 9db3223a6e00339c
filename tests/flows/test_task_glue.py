"""The tasks are glue: `.fn()` runs each over a real ledger without a Prefect server."""

from __future__ import annotations

import pytest

from payflow.intake import batch_from_rows
from payflow.ledger import Ledger
from payflow.tasks.count_batch import UnknownBatch, count_batch
from payflow.tasks.reconcile_batch import write_batch_report_only
from payflow.tasks.register_rows import register_rows
from payflow.tasks.validate_batch import validate_rows

ROWS = [
    ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"],
    ["glue-1", "1000", "XOF", "SIM", "2250700000101", "Kouadio Yao", "u-1"],
    ["glue-2", "-5", "XOF", "SIM", "2250700000102", "Kouadio Yao", "u-2"],
]


def test_register_count_and_report_a_batch(tmp_path):
    url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    report = validate_rows(batch_from_rows(ROWS), services=None, banks_for_phones=None)

    outcome = register_rows.fn(report, url, "alice")
    counts = count_batch.fn(url, report.batch_id)
    xlsx = write_batch_report_only.fn(url, report.batch_id, str(tmp_path / "out"), True)

    assert outcome.new == 1 and outcome.rejected == 1
    assert counts.statuses == {"REJECTED": 1, "VALIDATED": 1}
    assert counts.to_send == 1 and counts.rows == 2
    assert xlsx.endswith(".xlsx") and (tmp_path / "out").joinpath(xlsx).is_file()
    assert list((tmp_path / "out").glob("*-reconciliation.csv"))
    with Ledger.open(url) as ledger:
        assert ledger.batch_counts(report.batch_id) == counts
        facts = ledger.batch_facts(report.batch_id)
        assert facts is not None and facts.made_by == "alice"  # the maker, who may not approve


def test_counting_an_unknown_batch_says_so(tmp_path):
    with pytest.raises(UnknownBatch, match="no batch 'nope'"):
        count_batch.fn(f"sqlite:///{tmp_path / 'l.sqlite3'}", "nope")
