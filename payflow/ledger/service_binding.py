"""The payments service a ledger's rows are sent to: the embedded sandbox, or one merchant's API.

A row paid on the embedded sandbox reads COMPLETED in the ledger like any other, so the same file
run against the payments API with that ledger found every row already paid and paid nobody (and a
sandbox run on an API's ledger would write emulated outcomes beside real ones). Likewise a row
paid with one merchant's token reads paid to a run with another's, whose account never paid it.
The first run that sends binds the ledger to its kind and, for an API, to the merchantId its token
answers to; every later run must be of the same kind and merchant.
"""

from __future__ import annotations

from sqlalchemy import insert, select, update
from sqlalchemy.exc import IntegrityError

from payflow.ledger.ledger import Ledger
from payflow.ledger.tables import ServiceBinding

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


def sandbox_served(ledger: Ledger) -> bool | None:
    """The `"sandbox"` of a command that reads the ledger: True when its rows went to the
    embedded sandbox, False when to a payments API, by its binding; None for a ledger no run
    has bound. The reading command's own settings do not say where a batch is paid: a checker
    approving on a laptop without PAYFLOW_API_URL read "no real money moved" of a batch a
    deployment's worker would pay through the API."""
    if (kind := bound_kind(ledger)) is not None:
        return kind == SANDBOX
    return None


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
