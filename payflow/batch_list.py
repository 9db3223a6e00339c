"""Every batch of a ledger (payouts, refunds, links), newest first, searched and paged: what
`payflow batches` lists. Each batch's standing is said in an operator's words."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field, replace
from datetime import datetime

from payflow.ledger import Ledger, RowState
from payflow.links.store import LinkStore
from payflow.wording import APPROVAL_EXPIRED, WAITING_FOR_APPROVAL, unsent_words

# The standings a list can be searched by (`--state`); "declined" finds "declined by ana".
STANDINGS = (
    "not sent yet",
    WAITING_FOR_APPROVAL,
    "declined",
    APPROVAL_EXPIRED,
    "in progress",
    "paid",
    "not all paid",
    "nothing to pay",
    "refunded",
    "refunds not final",
    "not all refunded",
    "links open",
)
KINDS = ("payouts", "refunds", "links")
Approval = Callable[[str], str | None]  # batch id -> why its unsent rows wait (unsent_words)


@dataclass(frozen=True)
class BatchSearch:
    """What `payflow batches` was asked for: each filter None when not given."""

    since: datetime | None = None
    file: str | None = None  # part of the file name, any case
    maker: str | None = None  # the maker's name, any case
    state: str | None = None  # one of STANDINGS (a prefix of the standing)

    def matches_header(self, created_at: datetime, source: str, made_by: str | None) -> bool:
        """True when a batch's own facts pass the date, file and maker filters."""
        if self.since is not None and created_at < self.since:
            return False
        if self.file and self.file.casefold() not in source.casefold():
            return False
        return not self.maker or (made_by or "").casefold() == self.maker.casefold()


@dataclass(frozen=True)
class ListedBatch:
    """One batch as the list shows it."""

    batch_id: str
    kind: str  # payouts, refunds or links
    source: str
    created_at: datetime
    made_by: str | None
    statuses: dict[str, int] = field(default_factory=dict)
    standing: str = ""


@dataclass(frozen=True)
class BatchPage:
    """One page of the batches that match, and how many match in all."""

    batches: list[ListedBatch]
    total: int
    page: int
    pages: int


def payout_standing(counts: dict[str, int], unsent: str | None) -> str:
    """A payout batch's standing from its rows per state and why its unsent rows wait."""
    rows = sum(counts.values())
    rejected = counts.get(RowState.REJECTED.value, 0) + counts.get(RowState.CONFLICT.value, 0)
    unsent_rows = counts.get(RowState.VALIDATED.value, 0)
    open_states = {RowState.SUBMITTING, RowState.CREATED, RowState.PROCESSING}
    if unsent_rows and unsent and not unsent.startswith(WAITING_FOR_APPROVAL):
        return unsent  # declined, expired: its rows will not go
    if any(counts.get(state.value) for state in open_states):
        return "in progress"
    if unsent_rows:
        return unsent or "not sent yet"
    if rows == rejected:
        return "nothing to pay"
    paid = counts.get(RowState.COMPLETED.value, 0)
    return "paid" if paid == rows - rejected else "not all paid"


def refund_standing(counts: dict[str, int]) -> str:
    """A refund batch's standing from its refunds per state."""
    if counts.get(RowState.PENDING.value) or counts.get(RowState.MANUAL.value):
        return "refunds not final"
    if set(counts) == {RowState.COMPLETED.value}:
        return "refunded"
    return "not all refunded"


def links_standing(counts: dict[str, int]) -> str:
    """A links batch's standing: claims still waiting for recipients, or its payouts' end."""
    if counts.get(RowState.VALIDATED.value):
        return "links open"
    if counts.get(RowState.CREATED.value) or counts.get(RowState.PROCESSING.value):
        return "in progress"
    return "paid" if set(counts) == {RowState.COMPLETED.value} else "not all paid"


def _all_batches(ledger: Ledger, search: BatchSearch) -> list[ListedBatch]:
    """Every batch whose own facts pass the filters, newest first, without its counts."""
    found = [
        ListedBatch(h.batch_id, "payouts", h.source, h.created_at, h.made_by)
        for h in ledger.newest_batches(ledger.batch_count())
        if search.matches_header(h.created_at, h.source, h.made_by)
    ]
    links = LinkStore(ledger.engine)
    found += [
        ListedBatch(line.batch_id, "links", line.source_name, line.created_at, None, line.counts)
        for line in links.newest_batches(links.batch_count())
        if search.matches_header(line.created_at, line.source_name, None)
    ]
    return sorted(found, key=lambda b: (b.created_at, b.batch_id), reverse=True)


def _counted(ledger: Ledger, batch: ListedBatch, approval: Approval) -> ListedBatch:
    """The batch with its rows per state and its standing, read now."""
    if batch.kind == "links":
        # Its rows wait unsent for approval too: "links open" read as claims to send.
        waits = approval(batch.batch_id) if ledger.batch_exists(batch.batch_id) else None
        return replace(batch, standing=waits or links_standing(batch.statuses))
    counts = ledger.batch_summary(batch.batch_id)
    if not counts and ledger.refunds.batch_exists(batch.batch_id):
        counts = ledger.refunds.summary(batch.batch_id)
        waits = approval(batch.batch_id) if counts.get(RowState.VALIDATED.value) else None
        standing = waits or refund_standing(counts)
        return replace(batch, kind="refunds", statuses=counts, standing=standing)
    unsent = approval(batch.batch_id) if counts.get(RowState.VALIDATED.value) else None
    return replace(batch, statuses=counts, standing=payout_standing(counts, unsent))


def list_batches(
    ledger: Ledger, search: BatchSearch, approval: Approval, *, page: int, per_page: int
) -> BatchPage:
    """The `page`-th `per_page` batches that match `search`, newest first; `approval` says
    why a batch's unsent rows wait (declined, expired, waiting for approval) or None."""
    found = _all_batches(ledger, search)
    if search.state:
        wanted = search.state.casefold()
        found = [_counted(ledger, b, approval) for b in found]
        found = [b for b in found if b.standing.casefold().startswith(wanted)]
    total = len(found)
    pages = max(1, -(-total // per_page))
    shown = found[(page - 1) * per_page : page * per_page]
    if not search.state:
        shown = [_counted(ledger, b, approval) for b in shown]
    return BatchPage(shown, total, page, pages)


def approval_words(ledger: Ledger) -> Approval:
    """`Approval` read from the ledger's approval records under each batch's recorded policy."""
    from payflow.approvals import (
        Declined,
        Expired,
        Pending,
        PolicyError,
        Void,
        approval_status,
    )

    def words(batch_id: str) -> str | None:
        decline = next((r for r in ledger.approvals_of(batch_id) if r.decision == "decline"), None)
        if decline is not None:
            return unsent_words(declined_by=decline.approver)
        try:
            status = approval_status(ledger, batch_id)
        except PolicyError:
            return None
        if isinstance(status, Declined):
            return unsent_words(declined_by=status.by)
        return unsent_words(
            expired=isinstance(status, Expired), waiting=isinstance(status, Pending | Void)
        )

    return words
