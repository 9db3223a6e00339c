"""Find the platform's manual corrections: a COMPLETED payout that the service now calls FAILED.

The service sends no webhook for such a correction (the spec says it is requested from the
manager), so reconciliation re-fetches every COMPLETED payout of the batch and records changes.
"""

from __future__ import annotations

import asyncio
import logging
from dataclasses import dataclass

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import PaymentsApiError
from payflow.api.models import Payout
from payflow.ledger import EventSource, IllegalTransition, Ledger, LedgerError, RowState

logger = logging.getLogger(__name__)


@dataclass(frozen=True, slots=True)
class Correction:
    """A final payout whose status the platform changed after the fact."""

    external_id: str
    payout_id: str
    previous: str
    current: str
    status_message: str | None


async def _fetch(client: AsyncPayoutsClient, payout_id: str) -> Payout | None:
    try:
        return await client.get_payout(payout_id)
    except PaymentsApiError as exc:
        logger.warning("reconcile: fetch of payout %s failed: %s", payout_id, type(exc).__name__)
        return None


def _completed(ledger: Ledger, batch_id: str) -> list[tuple[str, str]]:
    # A batch may list one externalId on several rows; each payout is fetched once.
    pairs = {
        (row.external_id, row.payout_id)
        for row in ledger.batch_rows(batch_id)
        if row.state == RowState.COMPLETED and row.external_id and row.payout_id
    }
    return sorted(pairs)


async def reconcile_finals(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str
) -> list[Correction]:
    """Re-fetch the batch's COMPLETED payouts and record every correction the platform made."""
    completed = await asyncio.to_thread(_completed, ledger, batch_id)
    fetched = await asyncio.gather(*(_fetch(client, payout_id) for _, payout_id in completed))
    corrections: list[Correction] = []
    for (external_id, payout_id), payout in zip(completed, fetched, strict=True):
        if payout is None or payout.status == RowState.COMPLETED.value:
            continue
        try:
            moved = await asyncio.to_thread(
                ledger.record_status,
                external_id=external_id,
                payout_id=payout_id,
                status=payout.status,
                status_message=payout.status_message,
                source=EventSource.POLL,
            )
        except (IllegalTransition, LedgerError) as exc:
            # A move the transitions table does not know: keep it for a human, do not guess.
            logger.error("reconcile: %s", exc)
            continue
        if moved:
            corrections.append(
                Correction(
                    external_id,
                    payout_id,
                    RowState.COMPLETED.value,
                    payout.status,
                    payout.status_message,
                )
            )
    return corrections
