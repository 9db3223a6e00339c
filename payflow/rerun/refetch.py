"""Right before a rerun is built, ask the service again about every parent and every attempt
before it.

A row is dropped when its parent, or any earlier attempt, was corrected by the platform (FAILED
-> COMPLETED) or turns out to exist after a refused POST: sending it again could pay someone
twice.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import NotFoundError
from payflow.ledger import RowState
from payflow.rerun.candidates import Candidate

FAILED_FINAL = frozenset({"FAILED", "CANCELED", "EXPIRED"})


@dataclass(frozen=True, slots=True)
class Dropped:
    """A chosen row left out of the rerun, and why (shown to the operator)."""

    candidate: Candidate
    reason: str


async def _verdict(client: AsyncPayoutsClient, candidate: Candidate) -> str | None:
    """None when the row's attempts all still failed for good at the service; else why it is
    dropped."""
    reason = await _parent_verdict(client, candidate)
    if reason is not None:
        return reason
    for external_id in candidate.earlier:
        try:
            payout = await client.get_payout_by_external_id(external_id)
        except NotFoundError:
            continue  # refused before the service created it: it pays nobody
        status = payout.status.strip().upper()
        if status not in FAILED_FINAL:
            return (
                f"its earlier attempt {external_id} is now {status} at the service "
                "(the platform corrected it): not rerun; reconcile the batch"
            )
    return None


async def _parent_verdict(client: AsyncPayoutsClient, candidate: Candidate) -> str | None:
    if candidate.state is RowState.SUBMIT_REJECTED:
        found = await client.find_payout_by_external_id(candidate.external_id)
        if found is None:
            return None
        return f"the service holds payout {found.id} ({found.status}) for it: reconcile first"
    try:
        if candidate.payout_id is not None:
            payout = await client.get_payout(candidate.payout_id)
        else:
            payout = await client.get_payout_by_external_id(candidate.external_id)
    except NotFoundError:
        return "the service does not know this payout (is PAYFLOW_API_URL right?): not rerun"
    status = payout.status.strip().upper()
    if status in FAILED_FINAL:
        return None
    return f"the service now says {status} (the ledger says {candidate.state}): not rerun"


async def refetch_parents(
    client: AsyncPayoutsClient, chosen: Sequence[Candidate]
) -> tuple[list[Candidate], list[Dropped]]:
    """Split the chosen rows into those still failed at the service and those dropped."""
    kept: list[Candidate] = []
    dropped: list[Dropped] = []
    for candidate in chosen:
        reason = await _verdict(client, candidate)
        if reason is None:
            kept.append(candidate)
        else:
            dropped.append(Dropped(candidate, reason))
    return kept, dropped
