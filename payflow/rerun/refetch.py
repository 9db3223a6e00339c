"""Right before a rerun is built, ask the service again about every parent.

A parent the platform corrected (FAILED -> COMPLETED), or one that turns out to exist after a
refused POST, is dropped: sending it again could pay someone twice.
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
    """None when the parent still failed for good at the service; else why it is dropped."""
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
