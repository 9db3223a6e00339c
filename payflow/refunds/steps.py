"""The steps of a refund batch as plain functions; the flow's tasks and the tests call them."""

from __future__ import annotations

from collections import defaultdict
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

from payflow.api import AsyncPayoutsClient
from payflow.ledger import Ledger, RefundRegisterOutcome, RowState
from payflow.paying.balance import BalanceCheck, check_balance
from payflow.refunds.checks import RefundValidation, check_refund_file
from payflow.refunds.intake import RefundFile, read_refund_file

UNSENT = frozenset({RowState.VALIDATED, RowState.SUBMITTING})


@dataclass(frozen=True)
class PreparedRefunds:
    """A refund file read, checked and registered in the ledger."""

    file: RefundFile
    validation: RefundValidation
    registered: RefundRegisterOutcome

    @property
    def batch_id(self) -> str:
        """The batch id (from the file's bytes)."""
        return self.file.batch_id


async def prepare_refunds(
    path: str | Path,
    client: AsyncPayoutsClient,
    ledger: Ledger,
    *,
    sheet: str | None = None,
    made_by: str | None = None,
) -> PreparedRefunds:
    """Read the file, check every row (file rules, then one GET per order), register all rows
    and, the first time, `made_by` as the batch's maker (as a payout batch records its own)."""
    file = read_refund_file(path, sheet)
    validation = await check_refund_file(file, client, ledger.refunds)
    registered = ledger.refunds.register_batch(
        file.batch_id,
        file.source_name,
        validation.instructions,
        validation.rejected_rows(file),
        sheet=file.sheet,
    )
    if made_by:
        ledger.set_maker(file.batch_id, made_by)
    return PreparedRefunds(file, validation, registered)


def totals_to_refund(ledger: Ledger, batch_id: str) -> dict[str, Decimal]:
    """Per currency, the order amounts of the batch's refunds not sent yet (from the ledger)."""
    totals: dict[str, Decimal] = defaultdict(Decimal)
    for view in ledger.refunds.rows(batch_id):
        if view.state in UNSENT and view.amount is not None and view.currency:
            totals[view.currency] += view.amount
    return dict(totals)


async def check_refund_balance(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str
) -> BalanceCheck:
    """Compare what the batch may debit (whole order amounts) with the merchant balance."""
    return await check_balance(client, totals_to_refund(ledger, batch_id))
