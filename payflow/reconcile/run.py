"""Reconcile one batch: re-fetch every payout it sent (and look up the ones it never sent),
record forward moves in the ledger, store what the service said, and sync the findings.

Rows are read a page at a time and fetched with bounded concurrency, so memory stays flat for
a batch of any size; the figures come from the ledger afterwards (`payflow.ledger.totals`).
"""

from __future__ import annotations

import asyncio
import itertools
import logging
from collections import deque
from collections.abc import AsyncGenerator, Awaitable, Callable, Iterator, Mapping
from contextlib import aclosing
from dataclasses import dataclass, field, replace
from datetime import timedelta

from payflow.api import AsyncPayoutsClient
from payflow.api.calls import usable_in_path
from payflow.api.models import Payout
from payflow.ledger import (
    Detected,
    EventSource,
    FindingsSync,
    IllegalTransition,
    Ledger,
    LedgerError,
    ReportLine,
    ServiceView,
)
from payflow.paying import Fetched, fetch_payout
from payflow.reconcile.balance import RECONCILE, take_snapshot
from payflow.reconcile.detect import (
    RerunChains,
    RowCheck,
    discrepancies,
    is_in_doubt,
    is_never_sent,
    is_sent,
    paid_by_earlier,
    paid_twice,
    was_corrected,
)
from payflow.settings import Settings

logger = logging.getLogger(__name__)

PAGE_ROWS = 500
Progress = Callable[[int, int], None]  # told (rows reconciled so far, the batch's rows)


@dataclass(frozen=True, slots=True)
class ReconcileOptions:
    """How far to look and how hard to push the service."""

    stuck_after: Mapping[str, timedelta]
    # Payouts fetched at once; the client must allow as many (`max_in_flight=concurrency`), or
    # its own bound is the one that holds.
    concurrency: int = 8
    snapshot_balance: bool = True


@dataclass(slots=True)
class ReconcileResult:
    """What one reconciliation did."""

    batch_id: str
    fetched: int = 0
    unanswered: int = 0
    moved: int = 0
    findings: FindingsSync = field(default_factory=FindingsSync)
    detected: list[Detected] = field(default_factory=list)


def _record(ledger: Ledger, line: ReportLine, fetched: Fetched) -> tuple[str, bool]:
    """Record a forward move; returns the ledger state now and whether it moved."""
    payout = fetched.payout
    if payout is None or not is_sent(line) or line.external_id is None:
        return line.state, False
    if payout.status == line.state and payout.id == line.payout_id:
        # Nothing would move (the ledger already says so): skip a write transaction per row.
        return line.state, False
    moved = _record_move(ledger, line.external_id, payout)
    return (payout.status, True) if moved else (line.state, False)


def _record_move(ledger: Ledger, external_id: str, payout: Payout) -> bool:
    """Record what the service says of one payout, forward only; whether the ledger moved."""
    try:
        return ledger.record_status(
            external_id=external_id,
            payout_id=payout.id,
            status=payout.status,
            status_message=payout.status_message,
            source=EventSource.POLL,
            amount=payout.amount,
            currency=payout.currency,
        )
    except (IllegalTransition, LedgerError) as exc:
        # Kept for a person as a status_differs finding; never forced into the ledger.
        logger.warning("reconcile: %s", exc)
        return False


async def _refetch_earlier(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    page: list[ReportLine],
    slots: asyncio.Semaphore,
) -> dict[str, str]:
    """Fetch and record the earlier attempts of the page's rerun rows: a row shows its latest
    attempt, but a failed first attempt the platform pays after all is a second payment, and
    only its fetched status lets `paid_twice` see it. Returns the status of each answered one."""
    earlier = [ext for line in page if line.earlier for ext in line.earlier.split()]

    async def fetch(external_id: str) -> tuple[str, Fetched]:
        async with slots:
            return external_id, await fetch_payout(client, external_id, None)

    statuses: dict[str, str] = {}
    views: list[ServiceView] = []
    for external_id, fetched in await asyncio.gather(*(fetch(ext) for ext in earlier)):
        if fetched.payout is not None:
            await asyncio.to_thread(_record_move, ledger, external_id, fetched.payout)
            statuses[external_id] = fetched.payout.status
        if fetched.answered:
            views.append(_word_of(external_id, fetched))
    # Kept as each earlier attempt's latest word: a first attempt paid after all is paid.
    await asyncio.to_thread(ledger.save_service_views, batch_id, views)
    return statuses


def _view(line: ReportLine, fetched: Fetched) -> ServiceView:
    assert line.external_id is not None
    return _word_of(line.external_id, fetched)


def _word_of(external_id: str, fetched: Fetched) -> ServiceView:
    payout = fetched.payout
    return ServiceView(
        external_id=external_id,
        found=payout is not None,
        payout_id=payout.id if payout else None,
        status=payout.status if payout else None,
        status_message=payout.status_message if payout else None,
        amount=payout.amount if payout else None,
        currency=payout.currency if payout else None,
    )


async def reconcile_batch(
    client: AsyncPayoutsClient,
    ledger: Ledger,
    batch_id: str,
    options: ReconcileOptions,
    progress: Progress | None = None,
) -> ReconcileResult:
    """Three-way match of the batch's rows with the service; findings synced in the ledger.
    `progress` hears how many of the batch's rows are reconciled, after each page."""
    result = ReconcileResult(batch_id)
    rows_done = 0
    rows = (
        sum((await asyncio.to_thread(ledger.batch_summary, batch_id)).values()) if progress else 0
    )
    chains = RerunChains(await asyncio.to_thread(ledger.rerun_links))
    slots = asyncio.Semaphore(options.concurrency)
    unchecked: set[int] = set()
    states_now: dict[str, str] = {}
    in_chains: list[tuple[int, str]] = []

    async def fetch(line: ReportLine) -> Fetched:
        assert line.external_id is not None
        payout_id = line.payout_id if is_sent(line) else None
        async with slots:
            return await fetch_payout(client, line.external_id, payout_id)

    async def answers_for(page: list[ReportLine]) -> Answered:
        wanted = [
            line
            for line in page
            if (is_sent(line) or is_never_sent(line) or is_in_doubt(line))
            and usable_in_path(line.external_id)  # never asked: nothing was ever sent under it
        ]
        return wanted, list(await asyncio.gather(*(fetch(line) for line in wanted)))

    async with aclosing(_answered_pages(ledger.report_lines(batch_id), answers_for)) as pages:
        async for page, (wanted, answers) in pages:
            checks, views = await asyncio.to_thread(_settle, ledger, chains, wanted, answers)
            await asyncio.to_thread(ledger.save_service_views, batch_id, views)
            now = ledger.now()
            for check in checks:
                if not check.fetched.answered:
                    unchecked.add(check.line.row_number)
                    result.unanswered += 1
                    continue
                result.fetched += 1
                result.moved += check.ledger_state != check.line.state
                result.detected.extend(discrepancies(check, now=now, limits=options.stuck_after))
            for line in page:
                if line.external_id and line.external_id in chains and line.disposition == "NEW":
                    in_chains.append((line.row_number, line.external_id))
            # The service's word wins: a payout it calls COMPLETED paid, whatever the ledger says.
            states_now.update(
                (c.line.external_id, _state_now(c)) for c in checks if c.line.external_id
            )
            states_now.update(await _refetch_earlier(client, ledger, batch_id, page, slots))
            rows_done += len(page)
            if progress is not None:
                progress(rows_done, rows)
    for row_number, external_id in in_chains:
        members = chains.members(external_id)
        recorded = await asyncio.to_thread(ledger.payout_states, members)
        service = {k: v for k, v in states_now.items() if k in members}
        states = {**chains.states, **recorded, **service}
        found = paid_twice(row_number, external_id, members, states)
        if found is not None:
            result.detected.append(found)
        moved = paid_by_earlier(row_number, external_id, members, recorded, service)
        if moved is not None:
            _add_detail(result.detected, moved)
    result.findings = await asyncio.to_thread(
        ledger.sync_findings, batch_id, result.detected, unchecked_rows=unchecked
    )
    if options.snapshot_balance:
        await take_snapshot(client, ledger, batch_id, RECONCILE)
    return result


def _add_detail(detected: list[Detected], found: Detected) -> None:
    """Add `found`, or join its detail to the row's finding of the same kind (one per row and
    kind)."""
    for index, other in enumerate(detected):
        if (other.row_number, other.kind) == (found.row_number, found.kind):
            detected[index] = replace(other, detail=f"{other.detail}; {found.detail}")
            return
    detected.append(found)


def _state_now(check: RowCheck) -> str:
    payout = check.fetched.payout
    return payout.status if payout else check.ledger_state


def _next_page(lines: Iterator[ReportLine]) -> list[ReportLine]:
    return list(itertools.islice(lines, PAGE_ROWS))


Answered = tuple[list[ReportLine], list[Fetched]]  # the rows fetched, and what the service said


async def _answered_pages(
    lines: Iterator[ReportLine], answers_for: Callable[[list[ReportLine]], Awaitable[Answered]]
) -> AsyncGenerator[tuple[list[ReportLine], Answered]]:
    """Each page of rows with the service's answers. The next page is asked for while this one
    is answered and written: its fetches queue behind this page's for the in-flight slots, so
    the slots stay full across a page's end (its last fetches, then the next page's read, had
    left them idle) and the service answers while the ledger records."""
    asked: deque[tuple[list[ReportLine], asyncio.Future[Answered]]] = deque()

    async def ask_next() -> bool:
        page = await asyncio.to_thread(_next_page, lines)
        if page:
            asked.append((page, asyncio.ensure_future(answers_for(page))))
        return bool(page)

    try:
        more = await ask_next()
        while asked:
            if more:
                more = await ask_next()  # one page queued behind the one awaited
            page, answering = asked.popleft()
            yield page, await answering
    finally:
        for _, answering in asked:  # still fetching when the caller stopped: nobody waits now
            answering.cancel()


def _settle(
    ledger: Ledger, chains: RerunChains, wanted: list[ReportLine], answers: list[Fetched]
) -> tuple[list[RowCheck], list[ServiceView]]:
    checks: list[RowCheck] = []
    views: list[ServiceView] = []
    for line, fetched in zip(wanted, answers, strict=True):
        state, _moved = _record(ledger, line, fetched)
        corrected = is_sent(line) and was_corrected(line, line.state, state)
        rerun_done = bool(line.external_id) and chains.rerun_completed(line.external_id or "")
        checks.append(RowCheck(line, fetched, state, corrected, rerun_done))
        if fetched.answered and line.external_id:
            views.append(_view(line, fetched))
    return checks, views


def options_from(settings: Settings) -> ReconcileOptions:
    """Reconcile options from the settings (stuck limits in minutes per paymentType)."""
    limits = {k.upper(): timedelta(minutes=v) for k, v in settings.stuck_after_minutes.items()}
    # By default as many as the client lets fly: at 8 the re-fetch took longer than the submit.
    concurrency = settings.reconcile_concurrency or settings.max_in_flight
    return ReconcileOptions(stuck_after=limits, concurrency=concurrency)
