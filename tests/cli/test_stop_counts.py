"""A stop on the embedded sandbox counts the rows really sent (issue 36, item 9): "400 rows went
to this run's embedded sandbox" was said when 1 had a payout and 399 were only claimed."""

from __future__ import annotations

from decimal import Decimal
from pathlib import Path

from payflow.cli.past_sandbox import resume_hint
from payflow.ledger import Ledger
from payflow.model import PayoutInstruction
from payflow.settings import Settings


def _row(n: int) -> PayoutInstruction:
    return PayoutInstruction(
        row_number=n, external_id=f"stop-{n}", amount=Decimal(5 * n), currency="XOF",
        payment_type="SIM", requisites=f"22507{n:08d}", name=f"Awa {n}", user_id=f"u-{n}",
    )  # fmt: skip


def test_the_stop_line_counts_payouts_apart_from_rows_only_claimed(tmp_path: Path) -> None:
    settings = Settings(home=tmp_path / "home")
    assert settings.uses_sandbox
    with Ledger.open(settings.ledger_url_or_default()) as ledger:
        ledger.register_batch("b-stop", "stop.csv", [_row(n) for n in range(2, 402)], [])
        claimed = ledger.claim_for_submit("b-stop", "w1", 400)
        ledger.mark_created(claimed[0].external_id, "po-1", "CREATED")

    line = resume_hint(settings, "b-stop", "payflow pay b-stop")

    assert line.startswith("1 row was sent to this run's embedded sandbox, and 399 rows being")
    assert "400" not in line
