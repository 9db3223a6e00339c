"""Two reconciliations of one batch at once on PostgreSQL (two pay runs of it, or a run beside
`reconcile-recent`) store the service's answers and sync the findings without a duplicate key:
one pay run failed on `service_checks_pkey` once."""

from __future__ import annotations

import threading
from decimal import Decimal

import pytest
from ledger_support import instructions, unique

from payflow.ledger import Detected, FindingKind, Ledger, ServiceView

ROWS = 200
ROUNDS = 8


def _batches(url: str) -> list[tuple[str, list[str]]]:
    made = []
    with Ledger.open(url) as ledger:
        for _ in range(ROUNDS):
            batch, p = unique("b"), unique()
            rows = instructions(p, ROWS)
            ledger.register_batch(batch, "a.csv", rows, [])
            made.append((batch, [row.external_id for row in rows]))
    return made


def _views(ids: list[str]) -> list[ServiceView]:
    return [
        ServiceView(ext, True, f"pay-{ext}", "COMPLETED", None, Decimal(10), "RUB") for ext in ids
    ]


def _detected(ids: list[str]) -> list[Detected]:
    return [
        Detected(n, ext, FindingKind.STATUS_DIFFERS, "ledger VALIDATED, service COMPLETED")
        for n, ext in enumerate(ids, start=2)
    ]


@pytest.mark.postgres
def test_two_reconciliations_of_one_batch_at_once_store_each_answer_and_finding_once(
    postgres_url: str,
) -> None:
    batches = _batches(postgres_url)
    barrier = threading.Barrier(2)
    errors: list[BaseException] = []

    def reconcile(reverse: bool) -> None:
        with Ledger.open(postgres_url) as ledger:
            for batch, ids in batches:
                order = ids[::-1] if reverse else ids
                barrier.wait(timeout=60)
                try:
                    ledger.save_service_views(batch, _views(order))
                    ledger.sync_findings(batch, _detected(ids), unchecked_rows=set())
                except BaseException as exc:  # a thread cannot fail the test: the main thread does
                    errors.append(exc)

    threads = [threading.Thread(target=reconcile, args=(flag,)) for flag in (False, True)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(timeout=300)
    assert [str(e).splitlines()[0] for e in errors] == []
    with Ledger.open(postgres_url) as ledger:
        for batch, ids in batches:
            found = ledger.findings(batch)
            assert sorted(f.external_id or "" for f in found) == sorted(ids)
            assert {f.state for f in found} == {"open"}
