"""Checking a refund file before anything is sent: its own rules, then one GET per order.

Every problem is reported at once with row, column and rule: a row rejected for its reason or
amount is still looked up, and learns in the same run that its order is not COMPLETED; only a
row whose orderId names no order (blank, no UUID, unreadable) is not. A row whose externalId the
ledger already holds for the same order is not checked against the service again: a second run
of a file is then ALREADY_KNOWN, not "already refunded".
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass, field
from decimal import Decimal

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import PaymentsApiError
from payflow.api.orders import Order
from payflow.intake.problems import Problem, not_read
from payflow.ledger import RefundBook, RejectedRefund
from payflow.model import RefundInstruction
from payflow.refunds.intake import RefundFile
from payflow.schemas.iso4217 import money_words
from payflow.schemas.refund_schema import refund_problems

DEFAULT_CONCURRENCY = 8
# orderId rules that leave the cell a well-formed order id, so its order is still looked up.
ORDER_READABLE = frozenset({"order_id_unique"})


class OrderCheckError(Exception):
    """An order could not be read (after the client's retries): nothing was registered or sent."""


@dataclass
class RefundValidation:
    """What checking found: refunds that may be sent, and every problem of the others."""

    batch_id: str
    source_name: str
    rows: int
    instructions: list[RefundInstruction] = field(default_factory=list)
    rejects: list[Problem] = field(default_factory=list)
    known: int = 0  # rows the ledger already holds: never sent again

    @property
    def rejected(self) -> int:
        """Rows with at least one problem."""
        return len({p.row for p in self.rejects})

    def rejected_rows(self, file: RefundFile) -> list[RejectedRefund]:
        """The ledger's REJECTED rows, reasons as `column: message (rule)`."""
        reasons: dict[int, list[str]] = defaultdict(list)
        for p in self.rejects:
            reasons[p.row].append(f"{p.column}: {p.message} ({p.rule})")
        return [
            RejectedRefund(
                row,
                str(file.frame.at[row, "externalId"]),
                str(file.frame.at[row, "orderId"]),
                found,
            )
            for row, found in sorted(reasons.items())
        ]

    def totals(self) -> dict[str, Decimal]:
        """Order amounts to refund per currency (the most the balance can be debited)."""
        totals: dict[str, Decimal] = defaultdict(Decimal)
        for item in self.instructions:
            totals[item.currency] += item.amount
        return dict(totals)


async def fetch_orders(
    client: AsyncPayoutsClient, order_ids: list[str], concurrency: int = DEFAULT_CONCURRENCY
) -> dict[str, Order | None]:
    """One GET per distinct order, at most `concurrency` at a time; None for an unknown order."""
    slots = asyncio.Semaphore(concurrency)

    async def one(order_id: str) -> tuple[str, Order | None]:
        async with slots:
            try:
                return order_id, await client.find_order(order_id)
            except PaymentsApiError as exc:
                raise OrderCheckError(
                    f"could not read order {order_id} ({type(exc).__name__}); nothing was sent, "
                    "run again"
                ) from None

    return dict(await asyncio.gather(*(one(order_id) for order_id in dict.fromkeys(order_ids))))


def _order_problem(row: int, ext: str, column: str, rule: str, message: str) -> Problem:
    return Problem(row=row, column=column, rule=rule, message=message, external_id=ext)


def order_problems(
    row: int,
    ext: str,
    amount_text: str,
    order: Order | None,
    blocking: str | None,
    failed_before: tuple[str, str, str] | None = None,
) -> list[Problem]:
    """What is wrong with refunding `order` for this row (empty: it can be refunded)."""
    if order is None:
        return [
            _order_problem(row, ext, "orderId", "order_unknown", "no such order for this merchant")
        ]
    status = (order.status or "").upper()
    if status == "REFUND":
        return [
            _order_problem(
                row,
                ext,
                "orderId",
                "order_already_refunded",
                "the order is already refunded (status REFUND)",
            )
        ]
    problems = []
    if status != "COMPLETED":
        problems.append(
            _order_problem(
                row,
                ext,
                "orderId",
                "order_not_completed",
                f"the order is {status or 'of unknown status'}, not COMPLETED",
            )
        )
    if blocking is not None:
        problems.append(
            _order_problem(
                row,
                ext,
                "orderId",
                "refund_exists",
                f"the ledger holds a refund of this order ({blocking})",
            )
        )
    if failed_before is not None and blocking is None:
        earlier, state, batch = failed_before
        problems.append(
            _order_problem(
                row,
                ext,
                "orderId",
                "refund_failed_before",
                f"the order's refund {earlier} (batch {batch}) ended {state}; to refund it "
                "again on purpose, write a new externalId in the row",
            )
        )
    if amount_text and order.amount is not None and Decimal(amount_text) != order.amount:
        problems.append(
            _order_problem(
                row,
                ext,
                "amount",
                "amount_differs",
                f"amount {amount_text} differs from the order amount "
                f"{money_words(order.amount, order.currency)}; only full refunds",
            )
        )
    if order.amount is None or not order.currency:
        problems.append(
            _order_problem(
                row,
                ext,
                "orderId",
                "order_unreadable",
                "the service did not show the order's amount",
            )
        )
    return problems


async def check_refund_file(
    file: RefundFile,
    client: AsyncPayoutsClient,
    book: RefundBook,
    *,
    concurrency: int = DEFAULT_CONCURRENCY,
) -> RefundValidation:
    """The file's rules, then the order checks for every row whose orderId names an order,
    whatever else the row broke: every problem of a row at once. A row with a derived
    externalId whose order's refund failed before is refused: a failed refund is sent again
    only on purpose, under an externalId the operator writes (as a payout is)."""
    frame = file.frame
    result = RefundValidation(file.batch_id, file.source_name, len(frame))
    result.rejects.extend(file.read_problems)
    result.rejects.extend(not_read(refund_problems(frame), file.read_problems))
    bad_rows = {p.row for p in result.rejects}
    # An orderId that is blank, no UUID, padded or unreadable names no order: looking it up
    # would only restate its own problem. One shared with another row is still an order.
    no_order = {
        p.row for p in result.rejects if p.column == "orderId" and p.rule not in ORDER_READABLE
    }
    # A rejected amount is no figure to compare with the order's.
    bad_amount = {p.row for p in result.rejects if p.column == "amount"}
    rows = [row for row in frame.index.tolist() if row not in no_order]
    known = book.known(str(frame.at[row, "externalId"]) for row in rows)
    to_check: list[int] = []
    for row in rows:
        ext = str(frame.at[row, "externalId"])
        seen = known.get(ext)
        amount_text = "" if row in bad_amount else str(frame.at[row, "amount"])
        same_order = (
            seen is not None and seen.order_id.lower() == str(frame.at[row, "orderId"]).lower()
        )
        if same_order and row in bad_rows:
            # The ledger holds this row's own refund: the order's REFUND status is that refund,
            # not a problem of the row.
            continue
        if (
            seen is not None
            and same_order
            and (not amount_text or Decimal(amount_text) == seen.amount)
        ):
            result.instructions.append(_instruction(file, row, seen.amount, seen.currency))
            result.known += 1
        else:
            to_check.append(row)
    order_ids = [str(frame.at[row, "orderId"]) for row in to_check]
    orders = await fetch_orders(client, order_ids, concurrency)
    blocking = book.blocking_refunds(order_ids)
    derived = [
        order_id
        for row, order_id in zip(to_check, order_ids, strict=True)
        if row in file.derived_rows
    ]
    failed = book.failed_refunds(derived)
    for row in to_check:
        ext = str(frame.at[row, "externalId"])
        order_id = str(frame.at[row, "orderId"])
        order = orders[order_id]
        other = blocking.get(order_id)
        earlier = failed.get(order_id) if row in file.derived_rows else None
        found = order_problems(
            row,
            ext,
            "" if row in bad_amount else str(frame.at[row, "amount"]),
            order,
            other if other != ext else None,
            earlier if earlier is not None and earlier[0] != ext else None,
        )
        if found:
            result.rejects.extend(found)
        elif row not in bad_rows:
            assert order is not None and order.amount is not None and order.currency
            result.instructions.append(_instruction(file, row, order.amount, order.currency))
    result.rejects.sort(key=lambda p: (p.row, p.column))
    return result


def _instruction(file: RefundFile, row: int, amount: Decimal, currency: str) -> RefundInstruction:
    frame = file.frame
    return RefundInstruction(
        row_number=row,
        external_id=str(frame.at[row, "externalId"]),
        order_id=str(frame.at[row, "orderId"]),
        amount=amount,
        currency=currency.upper(),
        amount_given=bool(frame.at[row, "amount"]),
        reason=str(frame.at[row, "reason"]) or None,
        callback_url=str(frame.at[row, "callbackUrl"]) or None,
    )
