"""The `Ledger`: the one object the rest of payflow uses to read and move rows.

It is thin on purpose: each method delegates to the module that owns the job (register, claims,
moves, reading) and passes the clock, so tests can set time without sleeping.
"""

from __future__ import annotations

from collections.abc import Callable, Iterator, Mapping, Sequence
from datetime import UTC, datetime, timedelta
from decimal import Decimal
from types import TracebackType

from sqlalchemy import Engine

from payflow.ledger import (
    approvals,
    attempts,
    bulk,
    claims,
    counts,
    findings,
    moves,
    reading,
    register,
    rejected,
    repeats,
    report_versions,
    totals,
    unsent,
)
from payflow.ledger.approvals import ApprovalRecord, BatchFacts
from payflow.ledger.attempts import AttemptsOutcome, AttemptView, NewAttempt, ParentView
from payflow.ledger.bulk import BulkOutcome, CreatedPayout
from payflow.ledger.db import create_ledger_engine, reader, upgrade_to_head
from payflow.ledger.findings import (
    BalanceLine,
    Detected,
    FindingEventView,
    FindingKind,
    FindingsSync,
    FindingView,
    ServiceView,
)
from payflow.ledger.moves import StatusUpdate
from payflow.ledger.records import (
    BatchHeader,
    ClaimedPayout,
    Disposition,
    IntakeWarning,
    LedgerError,
    PayoutRef,
    RegisterOutcome,
    RejectedRow,
    RowView,
    StatusEventView,
)
from payflow.ledger.refund_book import RefundBook
from payflow.ledger.rejected import RejectedLine
from payflow.ledger.report_versions import ReportVersionView
from payflow.ledger.service_word import WordSource
from payflow.ledger.states import (
    MAY_SEND_STATES,
    NOT_SENT_PREFIX,
    EventSource,
    IllegalTransition,
    RowState,
)
from payflow.ledger.totals import (
    MessageTotal,
    Movement,
    OtherMovement,
    OutcomeTotal,
    PaidTotal,
    ReportLine,
    Settlement,
    WordDifference,
)
from payflow.ledger.unsent import UnsentTotal
from payflow.model import PayoutInstruction

Clock = Callable[[], datetime]
DEFAULT_LEASE_SECONDS = 300.0


def utc_now() -> datetime:
    """The current time as an aware UTC datetime."""
    return datetime.now(UTC)


class Ledger:
    """The source of truth for every row: register, claim, record outcomes, report."""

    def __init__(self, engine: Engine, *, clock: Clock = utc_now) -> None:
        """Wrap an engine whose schema is already at head; prefer `Ledger.open`."""
        self._engine = engine
        self._reader = reader(engine)
        self._clock = clock
        self.refunds = RefundBook(engine, clock)
        """Refund rows (issue 11): same database, same transition discipline."""

    @classmethod
    def open(cls, url: str, *, clock: Clock = utc_now) -> Ledger:
        """Connect to a SQLite file or PostgreSQL URL and migrate it to head (safe to race)."""
        engine = create_ledger_engine(url)
        try:
            upgrade_to_head(engine)
        except BaseException:
            engine.dispose()
            raise
        return cls(engine, clock=clock)

    def close(self) -> None:
        """Release every pooled connection."""
        self._engine.dispose()

    def __enter__(self) -> Ledger:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        traceback: TracebackType | None,
    ) -> None:
        self.close()

    @property
    def url(self) -> str:
        """The database URL, password hidden."""
        return self._engine.url.render_as_string(hide_password=True)

    @property
    def engine(self) -> Engine:
        """The engine, for stores that keep their own tables in the ledger (payout links)."""
        return self._engine

    @property
    def dialect(self) -> str:
        """ "sqlite" or "postgresql"."""
        return self._engine.dialect.name

    # -- registering -------------------------------------------------------------------------

    def register_batch(
        self,
        batch_id: str,
        source_name: str,
        valid: Sequence[PayoutInstruction],
        rejected: Sequence[RejectedRow],
        *,
        sheet: str | None = None,
        warnings: Sequence[IntakeWarning] = (),
        legacy_ids: Mapping[str, str] | None = None,
    ) -> RegisterOutcome:
        """Record every row of a batch once: NEW payouts, ALREADY_KNOWN, CONFLICT or REJECTED;
        `sheet`: the XLSX sheet the rows were read from; `warnings`: validation's, kept for the
        checker (the first registration's stay); `legacy_ids`: derived ids' first derivation."""
        return register.register_batch(
            self._engine,
            batch_id,
            source_name,
            valid,
            rejected,
            self._clock(),
            sheet=sheet,
            warnings=warnings,
            legacy_ids=legacy_ids or {},
        )

    def intake_warnings(self, batch_id: str) -> list[IntakeWarning]:
        """The warnings validation gave the batch's maker at upload, by row."""
        return reading.intake_warnings(self._reader, batch_id)

    def acknowledge_repeats(self, batch_id: str) -> int:
        """The operator allows the batch's repeats: they are not held, and HELD rows go on."""
        return repeats.acknowledge_repeats(self._engine, batch_id, self._clock())

    def held_rows(self, batch_id: str) -> list[repeats.HeldRow]:
        """Rows of the batch HELD as repeats, each with the earlier payout it repeats."""
        return repeats.held_rows(self._reader, batch_id, self._clock())

    def repeat_rows(self, batch_id: str) -> list[repeats.HeldRow]:
        """Rows of the batch held as repeats at registration, still held or released since."""
        return repeats.repeat_rows(self._reader, batch_id, self._clock())

    def amended_rows(self, batch_id: str, derived_prefix: str) -> list[repeats.AmendedRow]:
        """Derived-id rows paying a recipient an earlier derived-id row paid another amount."""
        return repeats.amended_rows(self._reader, batch_id, self._clock(), derived_prefix)

    def twin_rows(self, batch_id: str) -> list[repeats.TwinRow]:
        """Rows paying the same recipient, amount and currency as an earlier row of the batch."""
        return repeats.twin_rows(self._reader, batch_id)

    # -- claiming ----------------------------------------------------------------------------

    def claim_for_submit(
        self,
        batch_id: str,
        worker_id: str,
        limit: int,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> list[ClaimedPayout]:
        """Lease up to `limit` rows: crashed SUBMITTING rows first (needs_resolution=True: look
        each up by externalId before any POST); only when none are left, new VALIDATED rows."""
        return claims.claim(
            self._engine,
            batch_id,
            worker_id,
            limit,
            lease_seconds,
            self._clock(),
            resolution_only=False,
        )

    def claim_for_resolution(
        self,
        batch_id: str,
        worker_id: str,
        limit: int,
        lease_seconds: float = DEFAULT_LEASE_SECONDS,
    ) -> list[ClaimedPayout]:
        """Lease only SUBMITTING rows whose lease expired; never claims new rows."""
        return claims.claim(
            self._engine,
            batch_id,
            worker_id,
            limit,
            lease_seconds,
            self._clock(),
            resolution_only=True,
        )

    def release_stale_leases(self, batch_id: str, worker_id: str | None = None) -> int:
        """Expire the leases of the batch's SUBMITTING rows, so the next claim resolves them.

        Call it when a run starts again: with this run's `worker_id` after a crash of the same
        worker, or with None when this is the only worker. Returns the rows released."""
        return claims.release_leases(self._engine, batch_id, worker_id, self._clock())

    # -- outcomes of a submission --------------------------------------------------------------

    def mark_created(
        self,
        external_id: str,
        payout_id: str,
        status: str,
        status_message: str | None = None,
        *,
        source: EventSource = EventSource.SUBMIT,
    ) -> bool:
        """Record the payout the service created (or a lookup found: source=RESOLVE).

        Recorded even if the lease passed to another worker, since the payout exists; raises
        LeaseLost if the row was already released for retry. False when nothing moved."""
        item = CreatedPayout(external_id, payout_id, status, status_message, source)
        outcome = bulk.mark_created_many(self._engine, [item], self._clock())
        if external_id in outcome.errors:
            raise outcome.errors[external_id]
        return outcome.moved == 1

    def mark_created_many(self, created: Sequence[CreatedPayout]) -> BulkOutcome:
        """`mark_created` for many rows in one transaction (the submit engine's batched writes).

        A row that fails a check is returned in `.errors` (never half-written) and does not
        stop the others."""
        return bulk.mark_created_many(self._engine, created, self._clock())

    def mark_submit_rejected(
        self, external_id: str, message: str, *, worker_id: str | None = None
    ) -> bool:
        """The service refused the POST (4xx): SUBMITTING -> SUBMIT_REJECTED."""
        return self._finish_submit(
            external_id, RowState.SUBMIT_REJECTED, message, worker_id, EventSource.SUBMIT
        )

    def mark_conflict(
        self, external_id: str, message: str, *, worker_id: str | None = None
    ) -> bool:
        """The service holds other content under this externalId: SUBMITTING -> CONFLICT."""
        return self._finish_submit(
            external_id, RowState.CONFLICT, message, worker_id, EventSource.RESOLVE
        )

    def release_for_retry(
        self, external_id: str, *, worker_id: str | None = None, reason: str | None = None
    ) -> bool:
        """A lookup by externalId said 404, so sending again is safe: SUBMITTING -> VALIDATED;
        `reason` (what the service answered the POST) becomes the row's "not sent: ..." message."""
        message = f"{NOT_SENT_PREFIX}{reason}" if reason else "not found by lookup"
        return self._finish_submit(
            external_id, RowState.VALIDATED, message, worker_id, EventSource.RESOLVE
        )

    def _finish_submit(
        self,
        external_id: str,
        new: RowState,
        message: str | None,
        worker_id: str | None,
        source: EventSource,
    ) -> bool:
        return moves.mark_submit_outcome(
            self._engine,
            external_id,
            new,
            message=message,
            worker_id=worker_id,
            source=source,
            now=self._clock(),
        )

    # -- tracking ----------------------------------------------------------------------------

    def record_status(
        self,
        *,
        external_id: str | None = None,
        payout_id: str | None = None,
        status: str,
        status_message: str | None,
        source: EventSource | str,
        at: datetime | None = None,
        amount: Decimal | None = None,
        currency: str | None = None,
    ) -> bool:
        """Record a service status forward only: True if the row moved; False for a duplicate,
        a late (stale) or an unknown status (kept as the message). Raises IllegalTransition
        or UnknownPayout. The service's word is kept either way (`service_word`)."""
        change = moves.StatusUpdate(
            status=status,
            message=status_message,
            source=EventSource(source),
            external_id=external_id,
            payout_id=payout_id,
            at=at,
            amount=amount,
            currency=currency,
        )
        return moves.record_status(self._engine, change, now=self._clock())

    def record_statuses(
        self, updates: Sequence[StatusUpdate]
    ) -> list[bool | LedgerError | IllegalTransition]:
        """`record_status` for many updates in order, in one transaction: per update True,
        False, or the error it raised (that update alone is rolled back)."""
        return moves.record_statuses(self._engine, updates, now=self._clock())

    def payouts_to_poll(self, batch_id: str, now: datetime, limit: int) -> list[PayoutRef]:
        """CREATED/PROCESSING payouts of the batch whose next poll is due at `now`."""
        return reading.payouts_to_poll(self._reader, batch_id, now, limit)

    def take_polls_due(
        self, batch_id: str, now: datetime, limit: int, hold: timedelta
    ) -> list[PayoutRef]:
        """`payouts_to_poll`, each taken for `hold`: not due for another tracker of the batch
        until the taker records its poll (and its next one) or `hold` passes."""
        return moves.take_polls_due(self._engine, batch_id, now, limit, now + hold)

    def last_webhook_move(self, batch_id: str, since: datetime) -> datetime | None:
        """When a webhook last moved a payout of the batch (None: not since `since`)."""
        return reading.last_webhook_move(self._reader, batch_id, since)

    def schedule_poll(self, external_id: str, next_poll_at: datetime) -> None:
        """Set the next poll of a non-final payout."""
        moves.schedule_poll(self._engine, external_id, next_poll_at)

    def schedule_polls(self, schedule: Sequence[tuple[str, datetime]]) -> None:
        """Set the next poll of many non-final payouts (externalId, when) in one transaction."""
        moves.schedule_polls(self._engine, schedule)

    def make_polls_due(self, batch_id: str) -> int:
        """Every CREATED or PROCESSING payout of the batch is due for a poll now."""
        return moves.make_polls_due(self._engine, batch_id, self._clock())

    def last_change(self, batch_id: str) -> datetime | None:
        """When a row of the batch last changed (registered, moved or polled)."""
        return reading.last_change(self._reader, batch_id)

    def unfinished(self, batch_id: str) -> list[PayoutRef]:
        """Payouts of the batch not final yet (VALIDATED, SUBMITTING, CREATED, PROCESSING)."""
        return reading.unfinished(self._reader, batch_id)

    def has_unfinished(self, batch_id: str) -> bool:
        """Whether a payout of the batch is not final yet."""
        return reading.has_unfinished(self._reader, batch_id)

    def record_report_version(self, version: ReportVersionView) -> int:
        """Keep one version of a batch's reconciliation report; its id."""
        return report_versions.record_version(self._engine, version)

    def report_versions(self, batch_id: str) -> list[ReportVersionView]:
        """The batch's kept reconciliation reports, newest first."""
        return report_versions.versions(self._reader, batch_id)

    def final_since(self, batch_id: str, since: datetime) -> list[PayoutRef]:
        """Final payouts of the batch with news at or after `since` (the correction window)."""
        return reading.final_since(self._reader, batch_id, since)

    def word_differences(self, batch_id: str, limit: int) -> list[WordDifference]:
        """Rows whose service's latest word differs from the ledger's state, by row number."""
        return totals.word_differences(self._reader, batch_id, limit)

    def latest_outcomes(self, batch_id: str) -> dict[str, int]:
        """Source rows per outcome (the service's word first), counted in SQL."""
        return totals.latest_outcomes(self._reader, batch_id)

    def lease_holders(self, batch_id: str) -> set[str]:
        """Worker ids holding SUBMITTING rows of the batch (to find a dead worker's leases)."""
        return reading.lease_holders(self._reader, batch_id)

    # -- reporting ---------------------------------------------------------------------------

    def batch_summary(self, batch_id: str) -> dict[str, int]:
        """Source rows of the batch per state (REJECTED and CONFLICT rows count as such)."""
        return reading.batch_summary(self._reader, batch_id)

    def batch_counts(self, batch_id: str) -> counts.BatchCounts:
        """Rows per state, what is left to pay per currency, and the batch's content hash."""
        return counts.batch_counts(self._reader, batch_id)

    def batch_totals(self, batch_id: str) -> tuple[counts.CurrencyTotal, ...]:
        """Rows and sums per currency and destination of every payout of the batch, in any
        state (what it pays or paid; `batch_counts().to_pay` is only what is left)."""
        return counts.currency_totals(self._reader, batch_id)

    def to_pay(self, batch_id: str) -> tuple[counts.CurrencyTotal, ...]:
        """Rows and sums per currency and destination of the batch's payouts not sent yet."""
        return counts.to_pay(self._reader, batch_id)

    def may_send(self, batch_id: str) -> tuple[counts.CurrencyTotal, ...]:
        """Rows and sums per currency and destination of the batch's payouts it may still send
        (not sent yet, or held until released): what its approval is about."""
        return counts.currency_totals(self._reader, batch_id, MAY_SEND_STATES)

    def batch_rows(self, batch_id: str) -> Iterator[RowView]:
        """Every source row of the batch in order, requisites unmasked (the caller masks)."""
        return reading.batch_rows(self._reader, batch_id)

    def rows_in_states(
        self, batch_id: str, states: frozenset[RowState]
    ) -> list[tuple[int, str | None, RowState]]:
        """(row, externalId, state) of the batch's source rows in `states`, in row order."""
        return reading.rows_in_states(self._reader, batch_id, states)

    def states_of(self, batch_id: str, disposition: Disposition) -> dict[RowState, int]:
        """Rows of the batch with `disposition`, counted by state."""
        return reading.states_of(self._reader, batch_id, disposition)

    def batch_exists(self, batch_id: str) -> bool:
        """True when the batch was registered."""
        return reading.batch_exists(self._reader, batch_id)

    def newest_batches(self, limit: int, offset: int = 0) -> list[BatchHeader]:
        """Registered batches, newest first: `limit` of them after the first `offset`."""
        return reading.newest_batches(self._reader, limit, offset)

    def batch_header(self, batch_id: str) -> BatchHeader | None:
        """The batch's file (and sheet), when and by whom; None when it is not registered."""
        return reading.batch_header(self._reader, batch_id)

    def batch_count(self) -> int:
        """How many batches the ledger holds."""
        return reading.batch_count(self._reader)

    def status_events(self, external_id: str) -> list[StatusEventView]:
        """Every recorded state change of the payout, oldest first."""
        return reading.status_events(self._reader, external_id)

    # -- reconciliation ----------------------------------------------------------------------
    def outcome_totals(self, batch_id: str) -> list[OutcomeTotal]:
        """Rows and amounts per (currency, outcome), computed by the database."""
        return totals.outcome_totals(self._reader, batch_id)

    def other_movements(
        self, batch_id: str, since: datetime, until: datetime
    ) -> list[OtherMovement]:
        """Other batches' state changes of this ledger in [since, until] (the drift's split)."""
        return totals.other_movements(self._reader, batch_id, since, until)

    def settlement(self, batch_id: str) -> Settlement:
        """Rows not final and rows the service's word disagrees with (`payflow reconcile`)."""
        return totals.settlement(self._reader, batch_id)

    def service_paid_totals(self, batch_id: str) -> list[PaidTotal]:
        """Per currency, the batch's payouts (its reruns' too) the service paid, by its word."""
        return totals.service_paid_totals(self._reader, batch_id)

    def failure_totals(self, batch_id: str) -> list[MessageTotal]:
        """Unpaid rows grouped by currency, state and statusMessage."""
        return totals.failure_totals(self._reader, batch_id)

    def unsent_totals(self, batch_id: str) -> list[UnsentTotal]:
        """Rows never sent per currency and reason, computed by the database."""
        return unsent.unsent_totals(self._reader, batch_id)

    def movements_since(self, batch_id: str, since: datetime) -> list[Movement]:
        """The batch's state changes after `since`, amounts summed per currency and move."""
        return totals.movements_since(self._reader, batch_id, since)

    def open_finding_counts(self, batch_id: str) -> dict[tuple[str, str], int]:
        """Open or acknowledged findings per (currency, kind)."""
        return totals.open_finding_counts(self._reader, batch_id)

    def rejected_rows(self, batch_id: str, limit: int = 10) -> tuple[int, list[RejectedLine]]:
        """How many rows of the batch were rejected in its file, and the first `limit` of them
        with their reasons."""
        return rejected.rejected_rows(self._reader, batch_id, limit)

    def conflict_rows(self, batch_id: str, limit: int = 10) -> tuple[int, list[RejectedLine]]:
        """How many rows of the batch reuse a known externalId with other content, and the
        first `limit` with their reasons (the externalId's batch and the columns that differ)."""
        return rejected.rejected_rows(self._reader, batch_id, limit, Disposition.CONFLICT)

    def report_lines(self, batch_id: str) -> Iterator[ReportLine]:
        """Every source row with ledger and service views, streamed in row order."""
        return totals.report_lines(self._reader, batch_id)

    def batches_with(self, states: list[str], since: datetime | None = None) -> list[str]:
        """Batches owning payouts in `states` (with news since `since`)."""
        return totals.batches_with(self._reader, states, since)

    def not_rechecked(self, batch_id: str) -> int:
        """The batch's sent payouts no reconciliation re-fetched since their last news."""
        return totals.not_rechecked(self._reader, batch_id)

    def batches_not_rechecked(self) -> list[str]:
        """Batches owning a sent payout no reconciliation re-fetched since its last news."""
        return totals.batches_not_rechecked(self._reader)

    def rerun_links(self) -> list[tuple[str, str, str]]:
        """(externalId, externalId it reruns, state) of every rerun payout."""
        return totals.rerun_links(self._reader)

    def payout_states(self, external_ids: list[str]) -> dict[str, str]:
        """Ledger state of each named payout."""
        return totals.payout_states(self._reader, external_ids)

    def save_service_views(
        self,
        batch_id: str,
        views: Sequence[ServiceView],
        source: WordSource = WordSource.RECONCILE,
    ) -> None:
        """Keep what the service said about these payouts now as their latest word."""
        findings.save_service_views(self._engine, batch_id, views, self._clock(), source)

    def sync_findings(
        self, batch_id: str, detected: Sequence[Detected], *, unchecked_rows: set[int]
    ) -> FindingsSync:
        """Open, reopen and resolve the batch's findings from one reconciliation's view."""
        return findings.sync_findings(
            self._engine, batch_id, detected, unchecked_rows=unchecked_rows, now=self._clock()
        )

    def open_batch_finding(
        self, batch_id: str, kind: FindingKind, detail: str, *, actor: str
    ) -> bool:
        """Open a finding about the whole batch (row 0); True when it was not open already."""
        return findings.open_batch_finding(
            self._engine, batch_id, kind, detail, actor=actor, now=self._clock()
        )

    def acknowledge_finding(
        self, batch_id: str, finding_id: int, *, actor: str, note: str
    ) -> FindingView:
        """An operator read the finding; their note joins its history."""
        return findings.acknowledge(
            self._engine, batch_id, finding_id, actor=actor, note=note, now=self._clock()
        )

    def findings(self, batch_id: str) -> list[FindingView]:
        """The batch's findings, by row then kind."""
        return findings.list_findings(self._reader, batch_id)

    def finding_events(self, finding_id: int) -> list[FindingEventView]:
        """A finding's history, oldest first."""
        return findings.finding_events(self._reader, finding_id)

    def save_balance(self, batch_id: str, phase: str, lines: Sequence[BalanceLine]) -> None:
        """Store a snapshot of the merchant balance for the batch."""
        findings.save_balance(self._engine, batch_id, phase, lines)

    def balance_snapshot(self, batch_id: str, phase: str, *, first: bool) -> list[BalanceLine]:
        """The first or last snapshot of `phase`; empty when none was taken."""
        return findings.balance_snapshot(self._reader, batch_id, phase, first=first)

    # -- reruns (attempts.py) ------------------------------------------------------------------

    def latest_attempts(self, batch_id: str) -> list[AttemptView]:
        """Every source row of the batch once, by the latest attempt of its root."""
        return attempts.latest_attempts(self._reader, batch_id)

    def latest_summary(self, batch_id: str) -> dict[str, int]:
        """Rows per state of each row's latest attempt (the batch's own rows when never rerun)."""
        return attempts.latest_summary(self._reader, batch_id)

    def rerun_parents(self, batch_id: str) -> list[ParentView]:
        """The batch's attempts that send a payout again, each with the failed parent."""
        return attempts.rerun_parents(self._reader, batch_id)

    def payout_instruction(self, external_id: str) -> PayoutInstruction | None:
        """The stored instruction of one payout, or None."""
        return attempts.payout_instruction(self._reader, external_id)

    def create_attempts(
        self,
        batch_id: str,
        *,
        rerun_of: str,
        source_name: str,
        made_by: str | None,
        new: Sequence[NewAttempt],
    ) -> AttemptsOutcome:
        """Register new attempts as rerun batch `batch_id`; at most one child per parent."""
        return attempts.create_attempts(
            self._engine,
            batch_id,
            rerun_of=rerun_of,
            source_name=source_name,
            made_by=made_by,
            attempts=new,
            now=self._clock(),
        )

    def earlier_attempts(self, root_external_id: str, before: int) -> list[str]:
        """The externalIds of the root's attempts before attempt `before`, the root first."""
        return attempts.earlier_attempts(self._reader, root_external_id, before)

    def rerun_batches(self, batch_id: str) -> list[str]:
        """The rerun batches registered for `batch_id`, oldest first."""
        return attempts.rerun_batches(self._reader, batch_id)

    # -- approvals (approvals.py) --------------------------------------------------------------

    def batch_facts(self, batch_id: str) -> BatchFacts | None:
        """Content hash, totals, rows, maker and age of the batch; None when unknown."""
        return approvals.batch_facts(self._reader, batch_id)

    def rows_above(
        self, batch_id: str, limits: dict[str, Decimal]
    ) -> list[tuple[str, str, Decimal]]:
        """(externalId, currency, amount) of rows it may still send above their currency's
        per-row limit."""
        return approvals.rows_above(self._reader, batch_id, limits)

    def similar_batches(
        self, batch_id: str, until: datetime, days: int = 30
    ) -> list[tuple[str, int]]:
        """Batches of the `days` before `until` sharing payout contents with this one."""
        return approvals.similar_batches(self._reader, batch_id, until, days)

    def append_approval(self, record: ApprovalRecord) -> None:
        """Append one approval decision (append-only)."""
        approvals.append_approval(self._engine, record)

    def approvals_of(self, batch_id: str) -> list[ApprovalRecord]:
        """Every approval decision on the batch, oldest first."""
        return approvals.approvals_of(self._reader, batch_id)

    def set_maker(self, batch_id: str, maker: str) -> bool:
        """Record who made the batch, once; True when written."""
        return approvals.set_maker(self._engine, batch_id, maker)

    def now(self) -> datetime:
        """The ledger's clock (tests set it)."""
        return self._clock()
