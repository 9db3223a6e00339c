"""Which discrepancies one source row shows, from the ledger's and the service's views.

Pure functions: the caller fetched the payout and recorded any forward move in the ledger first.
"""

from __future__ import annotations

from collections import defaultdict
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from datetime import datetime, timedelta

from payflow.ledger import Detected, Disposition, FindingKind, ReportLine, RowOutcome, RowState
from payflow.paying import Fetched
from payflow.schemas.iso4217 import money_words

S = RowState
SENT_STATES = frozenset({S.CREATED, S.PROCESSING, S.COMPLETED, S.FAILED, S.CANCELED, S.EXPIRED})
NEVER_SENT_STATES = frozenset({S.VALIDATED, S.SUBMIT_REJECTED, S.REJECTED})
LIVE_STATES = frozenset({S.CREATED.value, S.PROCESSING.value, S.COMPLETED.value})
"""A payout in one of these has paid or may still pay its recipient."""
OPEN_STATES = frozenset({S.CREATED.value, S.PROCESSING.value})
OWN = ("NEW",)
REJECTED_DISPOSITION = Disposition.REJECTED.value


def is_sent(line: ReportLine) -> bool:
    """The row's payout was marked sent by this batch: reconcile re-fetches it by id."""
    return line.disposition in OWN and line.state in SENT_STATES


def is_in_doubt(line: ReportLine) -> bool:
    """A row of this batch left SUBMITTING (its run stopped between the POST and the answer):
    the service may hold its payout, so reconcile looks it up by externalId."""
    return bool(line.external_id) and line.disposition in OWN and line.state == S.SUBMITTING


def is_never_sent(line: ReportLine) -> bool:
    """The ledger never sent this row, and it may be: the service must not know its externalId.
    A row rejected in its file is never looked up: its id may be anything (`..` broke the batch's
    reconcile) and the service was never asked about it."""
    if not line.external_id or line.state not in NEVER_SENT_STATES:
        return False
    if line.disposition == REJECTED_DISPOSITION:
        return False
    # A rejected row whose externalId another batch paid is that batch's payout, not a surprise.
    return line.disposition in OWN or line.first_batch_id is None


@dataclass(frozen=True, slots=True)
class RowCheck:
    """One row after its fetch: the ledger state now (after recording) and what the service said."""

    line: ReportLine
    fetched: Fetched
    ledger_state: str
    corrected: bool
    rerun_completed: bool = False


def stuck_limit(limits: Mapping[str, timedelta], payment_type: str | None) -> timedelta:
    """The time a payout of this type may stay unfinished ('*' for types not named)."""
    return limits.get((payment_type or "").upper(), limits.get("*", timedelta(days=3)))


def discrepancies(
    check: RowCheck, *, now: datetime, limits: Mapping[str, timedelta]
) -> list[Detected]:
    """Every finding kind this row shows now (none when the service gave no answer)."""
    line, fetched = check.line, check.fetched
    found: list[Detected] = []

    def add(kind: FindingKind, detail: str) -> None:
        found.append(Detected(line.row_number, line.external_id, kind, detail))

    payout = fetched.payout
    if is_in_doubt(line):
        if payout is not None:
            # Only a pay run settles a SUBMITTING row (it holds the row's lease): say so.
            add(
                FindingKind.STATUS_DIFFERS,
                f"the service holds payout {payout.id} ({payout.status}) for this row, but the "
                "ledger still holds it as being sent (its pay run stopped before recording the "
                "answer): `payflow pay` of this batch records it and sends nothing twice",
            )
        return found
    if not is_sent(line):
        if payout is not None:
            add(
                FindingKind.UNEXPECTED_AT_SERVICE,
                f"the service holds payout {payout.id} ({payout.status}) for this externalId, "
                f"but the ledger never sent it (ledger {line.state})",
            )
        return found
    if fetched.missing:
        add(FindingKind.MISSING_AT_SERVICE, f"the ledger says {line.state}; the service: 404")
    if payout is not None:
        if payout.status != check.ledger_state:
            add(
                FindingKind.STATUS_DIFFERS,
                f"ledger {check.ledger_state}, service {payout.status}",
            )
        amount_differs = payout.amount is not None and payout.amount != line.amount
        currency_differs = bool(payout.currency) and payout.currency != line.currency
        if amount_differs or currency_differs:
            asked = money_words(line.amount, line.currency)
            reported = money_words(payout.amount, payout.currency)
            add(FindingKind.AMOUNT_DIFFERS, f"ledger {asked}, service {reported}")
    status_now = payout.status if payout is not None else check.ledger_state
    if status_now in OPEN_STATES and line.submitted_at is not None:
        limit = stuck_limit(limits, line.payment_type)
        waited = now - line.submitted_at
        if waited > limit:
            minutes = int(waited.total_seconds() // 60)
            add(FindingKind.STUCK, f"{status_now} for {minutes} min (limit {limit})")
    if check.corrected and not check.rerun_completed:
        message = payout.status_message if payout is not None else line.status_message
        add(
            FindingKind.CORRECTED,
            f"COMPLETED, then corrected to FAILED by the platform: {message or 'no message'}",
        )
    return found


def was_corrected(line: ReportLine, before: str, after: str) -> bool:
    """True when the row is (or just became) a corrected final payout."""
    return line.outcome is RowOutcome.CORRECTED or (before == S.COMPLETED and after == S.FAILED)


class RerunChains:
    """Payouts linked by `reruns_external_id`, grouped so each group is one source row's tries."""

    def __init__(self, links: Iterable[tuple[str, str, str]]) -> None:
        self._parent: dict[str, str] = {}
        self.states: dict[str, str] = {}
        self.children: dict[str, list[str]] = defaultdict(list)
        for rerun, original, state in links:
            self._union(rerun, original)
            self.states[rerun] = state
            self.children[original].append(rerun)

    def _root(self, key: str) -> str:
        while self._parent.get(key, key) != key:
            key = self._parent[key]
        return key

    def _union(self, a: str, b: str) -> None:
        self._parent.setdefault(a, a)
        self._parent.setdefault(b, b)
        self._parent[self._root(a)] = self._root(b)

    def __contains__(self, external_id: object) -> bool:
        return isinstance(external_id, str) and external_id in self._parent

    def members(self, external_id: str) -> list[str]:
        """Every externalId in the same chain, this one included."""
        root = self._root(external_id)
        return sorted(k for k in self._parent if self._root(k) == root)

    def rerun_completed(self, external_id: str) -> bool:
        """True when some rerun of this payout (directly or further down) is COMPLETED."""
        pending = list(self.children.get(external_id, []))
        while pending:
            child = pending.pop()
            if self.states.get(child) == S.COMPLETED:
                return True
            pending.extend(self.children.get(child, []))
        return False


def paid_by_earlier(
    row_number: int,
    external_id: str,
    chain: list[str],
    recorded: Mapping[str, str],
    service: Mapping[str, str],
) -> Detected | None:
    """A finding when an earlier attempt the ledger holds as failed pays or paid after all at
    the service (a platform correction the ledger cannot record): the row is not unpaid, and
    another rerun of it would pay twice."""
    moved = [
        key
        for key in chain
        if key != external_id
        and service.get(key) in LIVE_STATES
        and recorded.get(key) not in LIVE_STATES
    ]
    if not moved:
        return None
    shown = ", ".join(f"{k} (ledger {recorded.get(k)}, service {service[k]})" for k in moved)
    return Detected(
        row_number,
        external_id,
        FindingKind.STATUS_DIFFERS,
        f"an earlier attempt paid or may still pay after all: {shown}; do not rerun this row",
    )


def paid_twice(
    row_number: int, external_id: str, chain: list[str], states: Mapping[str, str]
) -> Detected | None:
    """A finding when more than one payout of the chain paid or may still pay."""
    live = [key for key in chain if states.get(key) in LIVE_STATES]
    if len(live) < 2:
        return None
    shown = ", ".join(f"{key} ({states[key]})" for key in live)
    return Detected(
        row_number,
        external_id,
        FindingKind.PAID_TWICE,
        f"{len(live)} payouts for one source row: {shown}",
    )
