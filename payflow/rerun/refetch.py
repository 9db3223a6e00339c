"""Right before a rerun is built, ask the service again about every parent and every attempt
before it.

A row is dropped when its parent, or any earlier attempt, was corrected by the platform (FAILED
-> COMPLETED) or turns out to exist after a refused POST: sending it again could pay someone
twice.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import NotFoundError
from payflow.api.models import Payout
from payflow.ledger import RowState, ServiceView
from payflow.rerun.candidates import Candidate

FAILED_FINAL = frozenset({"FAILED", "CANCELED", "EXPIRED"})


@dataclass(frozen=True, slots=True)
class Dropped:
    """A chosen row left out of the rerun, and why (shown to the operator)."""

    candidate: Candidate
    reason: str


Heard = Callable[[Sequence[ServiceView]], None]
"""Keeps what the service said of each payout asked about (its latest word in the ledger)."""

UNKNOWN_AT_THE_API = "the service does not know this payout (is PAYFLOW_API_URL right?): not rerun"
# Each command's embedded sandbox is new: a payout made on an earlier one is unknown to it, and
# "is PAYFLOW_API_URL right?" sent an operator with no such setting looking for one.
UNKNOWN_AT_THE_SANDBOX = (
    "this embedded sandbox does not know this payout (the one that paid it ended with its "
    "command; no real money moved): not rerun"
)


def _view(external_id: str, payout: Payout | None) -> ServiceView:
    return ServiceView(
        external_id=external_id,
        found=payout is not None,
        payout_id=payout.id if payout else None,
        status=payout.status if payout else None,
        status_message=payout.status_message if payout else None,
        amount=payout.amount if payout else None,
        currency=payout.currency if payout else None,
    )


async def _verdict(
    client: AsyncPayoutsClient, candidate: Candidate, heard: list[ServiceView], unknown: str
) -> str | None:
    """None when the row's attempts all still failed for good at the service; else why it is
    dropped (`unknown`: why, when the service does not know its payout)."""
    reason = await _parent_verdict(client, candidate, heard, unknown)
    if reason is not None:
        return reason
    for external_id in candidate.earlier:
        try:
            payout = await client.get_payout_by_external_id(external_id)
        except NotFoundError:
            continue  # refused before the service created it: it pays nobody
        heard.append(_view(external_id, payout))
        status = payout.status.strip().upper()
        if status not in FAILED_FINAL:
            return (
                f"its earlier attempt {external_id} is now {status} at the service "
                "(the platform corrected it): not rerun; reconcile the batch"
            )
    return None


async def _parent_verdict(
    client: AsyncPayoutsClient, candidate: Candidate, heard: list[ServiceView], unknown: str
) -> str | None:
    if candidate.state is RowState.SUBMIT_REJECTED:
        found = await client.find_payout_by_external_id(candidate.external_id)
        if found is None:
            return None
        heard.append(_view(candidate.external_id, found))
        return f"the service holds payout {found.id} ({found.status}) for it: reconcile first"
    try:
        if candidate.payout_id is not None:
            payout = await client.get_payout(candidate.payout_id)
        else:
            payout = await client.get_payout_by_external_id(candidate.external_id)
    except NotFoundError:
        return unknown
    heard.append(_view(candidate.external_id, payout))
    status = payout.status.strip().upper()
    if status in FAILED_FINAL:
        return None
    return f"the service now says {status} (the ledger says {candidate.state}): not rerun"


async def refetch_parents(
    client: AsyncPayoutsClient,
    chosen: Sequence[Candidate],
    heard: Heard | None = None,
    *,
    sandbox: bool = False,
) -> tuple[list[Candidate], list[Dropped]]:
    """Split the chosen rows into those still failed at the service and those dropped; what
    the service said of each payout asked about goes to `heard` (the ledger's service word).
    `sandbox`: the service is the embedded sandbox (how an unknown payout is explained)."""
    unknown = UNKNOWN_AT_THE_SANDBOX if sandbox else UNKNOWN_AT_THE_API
    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    views: list[ServiceView] = []
    for candidate in chosen:
        reason = await _verdict(client, candidate, views, unknown)
        if reason is None:
            kept.append(candidate)
        else:
            dropped.append(Dropped(candidate, reason))
    if heard is not None:
        heard(views)
    return kept, dropped
