"""The service's lists a paying process fetched, kept for processes without the API token, and
the rows registered without their bank or service checked.

A maker's process holds no PAYFLOW_API_TOKEN, so it cannot ask the service for the services list
or an SBP phone's banks. It validates with the lists the last process holding the token fetched
(kept here, with when); a row it still cannot check is registered with a mark, never claimed for
sending while marked (`payflow.ledger.claims`), and checked by the paying process first.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import delete, insert, select, update

from payflow.ledger.ledger import Ledger
from payflow.ledger.ledger import utc_now as _utc_now
from payflow.ledger.moves import apply_move, load_for_update
from payflow.ledger.states import EventSource, Move, RowState, check_move
from payflow.ledger.tables import KeptList, Payout, UncheckedRow

SERVICES_KEY = "services"
BANKS_PREFIX = "banks:"
BANK, SERVICE = "bank", "service"
CHECKED_BEFORE_SENDING = "checked before sending: "


@dataclass(frozen=True, slots=True)
class Kept:
    """One kept list: its JSON body and when the paying process fetched it."""

    body: str
    fetched_at: datetime


def keep_lists(ledger: Ledger, lists: Mapping[str, str], at: datetime | None = None) -> None:
    """Keep each list (key -> JSON) as fetched `at` (now), replacing what was kept."""
    if not lists:
        return
    at = at or _utc_now()
    keys = list(lists)
    with ledger.engine.begin() as connection:
        for start in range(0, len(keys), 500):
            chunk = keys[start : start + 500]
            connection.execute(delete(KeptList).where(KeptList.key.in_(chunk)))
            connection.execute(
                insert(KeptList), [{"key": k, "body": lists[k], "fetched_at": at} for k in chunk]
            )


def kept_lists(ledger: Ledger, keys: Iterable[str]) -> dict[str, Kept]:
    """The kept lists of these keys (the ones never kept are missing)."""
    wanted = list(dict.fromkeys(keys))
    found: dict[str, Kept] = {}
    with ledger.engine.connect() as connection:
        for start in range(0, len(wanted), 500):
            query = select(KeptList.key, KeptList.body, KeptList.fetched_at).where(
                KeptList.key.in_(wanted[start : start + 500])
            )
            found.update(
                {row.key: Kept(row.body, row.fetched_at) for row in connection.execute(query)}
            )
    return found


def mark_unchecked(ledger: Ledger, batch_id: str, marks: Mapping[str, str]) -> None:
    """Mark rows (externalId -> "bank", "service" or both) as registered unchecked: none is
    sent until a paying process checked it. A row already marked keeps its mark."""
    if not marks:
        return
    ids = list(marks)
    with ledger.engine.begin() as connection:
        for start in range(0, len(ids), 500):
            chunk = ids[start : start + 500]
            known = set(
                connection.scalars(
                    select(UncheckedRow.external_id).where(UncheckedRow.external_id.in_(chunk))
                )
            )
            rows = [
                {"external_id": ext, "batch_id": batch_id, "checks": marks[ext]}
                for ext in chunk
                if ext not in known
            ]
            if rows:
                connection.execute(insert(UncheckedRow), rows)


def unchecked_rows(ledger: Ledger, batch_id: str) -> dict[str, str]:
    """The batch's marked rows that would be sent next (VALIDATED): externalId -> checks. A
    HELD row keeps its mark until it is released and checked."""
    query = (
        select(UncheckedRow.external_id, UncheckedRow.checks)
        .join(Payout, Payout.external_id == UncheckedRow.external_id)
        .where(
            UncheckedRow.batch_id == batch_id,
            Payout.state == RowState.VALIDATED.value,
        )
    )
    with ledger.engine.connect() as connection:
        return {row.external_id: row.checks for row in connection.execute(query)}


def passed(ledger: Ledger, external_id: str, bank_id: str | None = None) -> None:
    """The paying process checked the row and it passed: unmark it, with the bank id its
    bank name resolved to when it named the bank (what a checked intake would have stored)."""
    with ledger.engine.begin() as connection:
        if bank_id is not None:
            connection.execute(
                update(Payout)
                .where(
                    Payout.external_id == external_id,
                    Payout.state == RowState.VALIDATED.value,
                )
                .values(bank_name=bank_id)
            )
        connection.execute(delete(UncheckedRow).where(UncheckedRow.external_id == external_id))


def refuse(ledger: Ledger, external_id: str, message: str) -> bool:
    """The paying process checked the row and it fails: VALIDATED -> SUBMIT_REJECTED (never
    sent), with the rule it broke. False when the row had moved on (nothing written)."""
    now = _utc_now()
    with ledger.engine.begin() as connection:
        row = load_for_update(connection, external_id=external_id)
        current = RowState(row.state)
        if (
            current is RowState.VALIDATED
            and check_move(external_id, current, RowState.SUBMIT_REJECTED) is Move.APPLY
        ):
            apply_move(
                connection,
                row,
                RowState.SUBMIT_REJECTED,
                source=EventSource.SUBMIT,
                message=CHECKED_BEFORE_SENDING + message,
                now=now,
            )
            connection.execute(delete(UncheckedRow).where(UncheckedRow.external_id == external_id))
            return True
    return False
