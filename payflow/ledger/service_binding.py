"""The kind of payments service a ledger's rows are sent to: the embedded sandbox or an API.

A row paid on the embedded sandbox reads COMPLETED in the ledger like any other, so the same
file run against the payments API with that ledger found every row already paid and paid nobody
(and a sandbox run on an API's ledger would write emulated outcomes beside real ones). The
first run that sends binds the ledger to its kind; every later run must be of the same kind.
"""

from __future__ import annotations

from sqlalchemy import insert, select
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
