"""The payments service a ledger's rows are sent to: the embedded sandbox, or one merchant's API.

A row paid on the embedded sandbox reads COMPLETED in the ledger like any other, so the same file
run against the payments API with that ledger found every row already paid and paid nobody (and a
sandbox run on an API's ledger would write emulated outcomes beside real ones). Likewise a row
paid with one merchant's token reads paid to a run with another's, whose account never paid it.
The first run that sends binds the ledger to its kind and, for an API, to the merchantId its token
answers to; every later run must be of the same kind and merchant.
"""

from __future__ import annotations

from sqlalchemy import exists, insert, or_, select, update
from sqlalchemy.exc import IntegrityError

from payflow.ledger.ledger import Ledger
from payflow.ledger.states import PENDING_STATES, REFUND_FINAL, REFUND_OPEN, SENT_STATES
from payflow.ledger.tables import LinkPayout, Payout, Refund, ServiceBinding

SANDBOX = "embedded sandbox"
API = "payments API"
_ROW = 1  # the table holds one row


def service_kind(sandbox: bool) -> str:
    """The binding's word for a target: SANDBOX or API."""
    return SANDBOX if sandbox else API


def bound_kind(ledger: Ledger) -> str | None:
    """The kind the ledger is bound to, or None before its first run."""
    with ledger.engine.connect() as conn:
        found: str | None = conn.execute(
            select(ServiceBinding.kind).where(ServiceBinding.id == _ROW)
        ).scalar_one_or_none()
    return found


def sandbox_served(ledger: Ledger, *, settings_sandbox: bool) -> bool | None:
    """The `"sandbox"` of a command that reads the ledger: True when its rows went to the
    embedded sandbox, False when to a payments API, by its binding.

    A ledger no run has bound sent nothing since bindings were recorded. With nothing sent at
    all, no money moved and the next run goes where the command's settings say:
    `settings_sandbox` (no PAYFLOW_API_URL: the embedded sandbox). A ledger older than bindings
    that holds sent rows gives None: nothing says where they went, and "no real money moved"
    may be false."""
    if (kind := bound_kind(ledger)) is not None:
        return kind == SANDBOX
    return None if _sent_any(ledger) else settings_sandbox


def _sent_any(ledger: Ledger) -> bool:
    """Whether any payout, refund or payout link of the ledger was sent (or is being sent)."""
    payout_states = [str(s) for s in PENDING_STATES | SENT_STATES]
    refund_states = [str(s) for s in PENDING_STATES | REFUND_OPEN | REFUND_FINAL]
    sent = or_(
        exists().where(or_(Payout.payout_id.is_not(None), Payout.state.in_(payout_states))),
        exists().where(Refund.state.in_(refund_states)),
        exists().where(LinkPayout.payout_id.is_not(None)),
    )
    with ledger.engine.connect() as conn:
        return bool(conn.execute(select(sent)).scalar())


def bind_service(ledger: Ledger, kind: str) -> str:
    """The kind the ledger is bound to: `kind`, recorded now, when it had none."""
    if (bound := bound_kind(ledger)) is not None:
        return bound
    try:
        with ledger.engine.begin() as conn:
            conn.execute(insert(ServiceBinding).values(id=_ROW, kind=kind, bound_at=ledger.now()))
    except IntegrityError:  # another process bound it first: its kind stands
        raced = bound_kind(ledger)
        if raced is None:
            raise
        return raced
    return kind


def bind_merchant(ledger: Ledger, merchant_id: str) -> str:
    """The merchant an API-bound ledger is bound to: `merchant_id`, recorded now, when it had
    none (bound before merchants were recorded, or by a run that could not learn its merchant)."""
    with ledger.engine.begin() as conn:
        # Conditional, so of two first runs at once the first merchant written stands.
        conn.execute(
            update(ServiceBinding)
            .where(ServiceBinding.id == _ROW, ServiceBinding.merchant_id.is_(None))
            .values(merchant_id=merchant_id)
        )
        bound: str | None = conn.execute(
            select(ServiceBinding.merchant_id).where(ServiceBinding.id == _ROW)
        ).scalar_one_or_none()
    if bound is None:
        raise LookupError("the ledger is not bound to a service yet: bind_service first")
    return bound
