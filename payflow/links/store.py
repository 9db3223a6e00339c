"""The ledger's side of payout links: registered rows, hashed claim tokens, statuses forward only.

Rows live in `link_payouts` (one per externalId, VALIDATED until the recipient's payout exists)
and `link_claims` (only the SHA-256 of each token); the problems of rows that got no link live in
`link_rejects`, so every report of the batch lists them. An externalId already used by an ordinary
payout, or registered with other content, is a CONFLICT: one externalId, one payout, ever.
"""

from __future__ import annotations

import hashlib
import logging
import secrets
from collections.abc import Callable, Iterable, Sequence
from dataclasses import dataclass, field, replace
from datetime import datetime, timedelta
from decimal import Decimal
from typing import TYPE_CHECKING, Any

from sqlalchemy import Engine, delete, exists, func, insert, or_, select, update

from payflow.api.webhooks import PayoutEvent
from payflow.ledger import Ledger
from payflow.ledger.db import create_ledger_engine, reader, upgrade_to_head
from payflow.ledger.ledger import utc_now
from payflow.ledger.register import ensure_batch_row
from payflow.ledger.states import (
    API_STATUSES,
    CORRECTIONS,
    IllegalTransition,
    Move,
    RowState,
    check_move,
    parse_api_status,
)
from payflow.ledger.tables import LinkClaim, LinkPayout, LinkReject, Payout
from payflow.links.records import (
    CURRENCY,
    ClaimLookup,
    IssuedClaim,
    LinkRow,
    LinksBatchLine,
    LinkView,
)
from payflow.schemas.iso4217 import money_words

if TYPE_CHECKING:
    from payflow.intake import Problem

logger = logging.getLogger(__name__)
Clock = Callable[[], datetime]
TOKEN_BYTES = 32  # 256 random bits: unguessable
CONFLICT_COLUMN, CONFLICT_RULE = "externalId", "external_id_conflict"  # a conflict's problem
# A row whose externalId has a link from an earlier batch, kept beside the rejects (a row with no
# link of its own) so every report of its file accounts for it; never counted as rejected.
KNOWN_RULE = "external_id_known"
_CHUNK = 500


def token_hash(token: str) -> str:
    """What the ledger keeps of a claim token."""
    return hashlib.sha256(token.encode("utf-8")).hexdigest()


def check_link_move(external_id: str, current: RowState, new: RowState) -> Move:
    """The ledger's forward-only rule, plus: a link row awaiting its recipient (VALIDATED) may
    jump to any service status, since the widget, not payflow, created the payout."""
    if current is RowState.VALIDATED and new in API_STATUSES:
        return Move.APPLY
    return check_move(external_id, current, new)


@dataclass
class LinkRegisterOutcome:
    """What registering a links file decided per row."""

    new: list[LinkRow] = field(default_factory=list)
    # Each with where it was registered first, e.g. "links batch 8ea0... (row 3)", and its
    # payout's state in the ledger (VALIDATED: the recipient has made none yet).
    already_known: list[tuple[LinkRow, str, RowState]] = field(default_factory=list)
    conflicts: list[tuple[LinkRow, str]] = field(default_factory=list)


@dataclass(frozen=True, slots=True)
class _KnownLink:
    content_hash: str
    batch_id: str
    row_number: int
    user_id: str
    amount: Decimal
    service_id: int | None
    state: str

    def conflict_reason(self, row: LinkRow) -> str:
        """Which fields differ, by their column names; the amounts only, never a userId."""
        differing: list[str] = []
        if row.user_id != self.user_id:
            differing.append("userId")
        if row.amount != self.amount:
            here, before = money_words(row.amount, CURRENCY), money_words(self.amount, CURRENCY)
            differing.append(f"amount ({here} here, {before} before)")
        if (row.service_id or None) != (self.service_id or None):
            differing.append("serviceId")
        return (
            f"externalId {row.external_id!r} was registered by links batch {self.batch_id} "
            f"(row {self.row_number}) with different {', '.join(differing) or 'content'}; "
            "no link issued"
        )


class LinkStore:
    """Register link rows, issue and look up claims, record the recipients' payouts."""

    def __init__(self, engine: Engine, *, clock: Clock = utc_now) -> None:
        self._engine = engine
        self._reader = reader(engine)
        self._clock = clock

    @classmethod
    def open(cls, url: str, *, clock: Clock = utc_now) -> LinkStore:
        """Connect to the ledger database and migrate it to head."""
        engine = create_ledger_engine(url)
        upgrade_to_head(engine)
        return cls(engine, clock=clock)

    def close(self) -> None:
        """Release pooled connections."""
        self._engine.dispose()

    def now(self) -> datetime:
        """The store's clock (tests set it)."""
        return self._clock()

    @property
    def engine(self) -> Engine:
        """The ledger's engine (the claims server reads a batch's approval through it)."""
        return self._engine

    # -- registering ---------------------------------------------------------------------

    def register(
        self,
        batch_id: str,
        source_name: str,
        rows: Sequence[LinkRow],
        problems: Sequence[Problem] = (),
    ) -> LinkRegisterOutcome:
        """Record each row once (a row of this batch registered before is ALREADY_KNOWN), and the
        file's `problems` with the conflicts found here as the batch's rejects."""
        outcome = LinkRegisterOutcome()
        now = self._clock()
        with self._engine.begin() as connection:
            known: dict[str, _KnownLink] = {}
            ordinary: set[str] = set()
            ids = [row.external_id for row in rows]
            for start in range(0, len(ids), _CHUNK):
                part = ids[start : start + _CHUNK]
                found = connection.execute(
                    select(
                        LinkPayout.external_id,
                        LinkPayout.content_hash,
                        LinkPayout.batch_id,
                        LinkPayout.row_number,
                        LinkPayout.user_id,
                        LinkPayout.amount,
                        LinkPayout.service_id,
                        LinkPayout.state,
                    ).where(LinkPayout.external_id.in_(part))
                )
                known.update((found_row[0], _KnownLink(*found_row[1:])) for found_row in found)
                ordinary.update(
                    connection.execute(
                        select(Payout.external_id).where(Payout.external_id.in_(part))
                    ).scalars()
                )
            values: list[dict[str, Any]] = []
            from_earlier: list[tuple[LinkRow, str]] = []
            for row in rows:
                seen = known.get(row.external_id)
                if row.external_id in ordinary:
                    outcome.conflicts.append((row, "externalId already used by a payout"))
                elif seen is None:
                    outcome.new.append(row)
                    values.append(_insert_values(batch_id, source_name, row, now))
                elif seen.content_hash == row.content_hash():
                    first = f"links batch {seen.batch_id} (row {seen.row_number})"
                    outcome.already_known.append((row, first, RowState(seen.state)))
                    if seen.batch_id != batch_id:  # the same file again is its own rows
                        from_earlier.append((row, first))
                else:
                    outcome.conflicts.append((row, seen.conflict_reason(row)))
            if values:
                connection.execute(insert(LinkPayout), values)
            # Its `batches` row: the batch's terms and approvals are kept as every batch's.
            rejected = len({p.row for p in problems}) + len(outcome.conflicts)
            valid = len(rows) - len(outcome.conflicts)
            ensure_batch_row(connection, batch_id, source_name, valid, rejected, now, None)
            # The same batch id is the same file: its rejects are replaced, never doubled.
            connection.execute(delete(LinkReject).where(LinkReject.batch_id == batch_id))
            rejects = [(p.row, p.external_id, p.column, p.rule, p.message) for p in problems]
            rejects += [
                (row.row_number, row.external_id, CONFLICT_COLUMN, CONFLICT_RULE, reason)
                for row, reason in outcome.conflicts
            ]
            rejects += [
                (row.row_number, row.external_id, CONFLICT_COLUMN, KNOWN_RULE, first)
                for row, first in from_earlier
            ]
            if rejects:
                connection.execute(
                    insert(LinkReject), [_reject_values(batch_id, now, *r) for r in rejects]
                )
        return outcome

    def issue_claims(self, rows: Iterable[LinkRow | LinkView], days: float) -> list[IssuedClaim]:
        """`new_claims` stored at once (a caller with no file to write first)."""
        issued = self.new_claims(rows, days)
        self.store_claims(issued)
        return issued

    def new_claims(self, rows: Iterable[LinkRow | LinkView], days: float) -> list[IssuedClaim]:
        """A fresh random token per row, not stored yet. Expires after `days`."""
        now = self._clock()
        expires = now + timedelta(days=days)
        return [
            IssuedClaim(
                row.row_number,
                row.external_id,
                row.user_id,
                row.amount,
                secrets.token_urlsafe(TOKEN_BYTES),
                expires,
            )
            for row in rows
        ]

    def store_claims(self, claims: Sequence[IssuedClaim]) -> None:
        """Make the claims live; only each token's hash is stored."""
        now = self._clock()
        values = [
            {
                "token_hash": token_hash(claim.token),
                "external_id": claim.external_id,
                "issued_at": now,
                "expires_at": claim.expires_at,
                "opened_count": 0,
            }
            for claim in claims
        ]
        if values:
            with self._engine.begin() as connection:
                connection.execute(insert(LinkClaim), values)

    # -- claims --------------------------------------------------------------------------

    def find_claim(self, token: str) -> ClaimLookup | None:
        """The row a claim token opens, or None for an unknown token."""
        query = (
            select(LinkClaim.id, LinkClaim.expires_at, LinkPayout)
            .join(LinkPayout, LinkPayout.external_id == LinkClaim.external_id)
            .where(LinkClaim.token_hash == token_hash(token))
        )
        with self._reader.connect() as connection:
            found = connection.execute(query).first()
        if found is None:
            return None
        return ClaimLookup(
            claim_id=found.id,
            external_id=found.external_id,
            user_id=found.user_id,
            amount=found.amount,
            service_id=found.service_id,
            state=RowState(found.state),
            payout_id=found.payout_id,
            expired=found.expires_at <= self._clock(),
            batch_id=found.batch_id,
        )

    def hold_claim(self, claim: ClaimLookup, device: str) -> bool:
        """True when `device` (a random cookie value) holds the claim: it is the first device
        that opened it (bound now, atomically) or opened it before. False: another device did;
        of two devices racing, exactly one wins."""
        mine = token_hash(device)
        with self._engine.begin() as connection:
            connection.execute(
                update(LinkClaim)
                .where(LinkClaim.id == claim.claim_id, LinkClaim.device_hash.is_(None))
                .values(device_hash=mine)
            )
            holder = connection.execute(
                select(LinkClaim.device_hash).where(LinkClaim.id == claim.claim_id)
            ).scalar_one()
        return secrets.compare_digest(str(holder), mine)

    def mark_opened(self, claim: ClaimLookup) -> None:
        """Count a widget link minted for this claim (the report shows opened, unused claims)."""
        now = self._clock()
        with self._engine.begin() as connection:
            connection.execute(
                update(LinkClaim)
                .where(LinkClaim.id == claim.claim_id)
                .values(opened_count=LinkClaim.opened_count + 1, last_opened_at=now)
            )
            connection.execute(
                update(LinkPayout)
                .where(LinkPayout.external_id == claim.external_id)
                .values(links_minted=LinkPayout.links_minted + 1, updated_at=now)
            )

    # -- statuses ------------------------------------------------------------------------

    def knows(self, external_id: str) -> bool:
        """True when the externalId is a link row of this ledger."""
        query = select(LinkPayout.id).where(LinkPayout.external_id == external_id)
        with self._reader.connect() as connection:
            return connection.execute(query).first() is not None

    def record_status(
        self, external_id: str, payout_id: str | None, status: str, message: str | None
    ) -> bool:
        """Record the recipient's payout status forward only; True when the row moved.

        False for an unknown externalId, a duplicate or a late status. IllegalTransition for a
        move nobody allowed; a second payout id for one externalId raises too."""
        state = parse_api_status(status)
        now = self._clock()
        with self._engine.begin() as connection:
            row = connection.execute(
                select(LinkPayout.id, LinkPayout.state, LinkPayout.payout_id)
                .where(LinkPayout.external_id == external_id)
                .with_for_update()
            ).first()
            if row is None or state is None:
                return False
            if payout_id is not None and row.payout_id not in (None, payout_id):
                raise IllegalTransition(external_id, RowState(row.state), state)
            current = RowState(row.state)
            if check_link_move(external_id, current, state) is Move.STALE:
                return False
            connection.execute(
                update(LinkPayout)
                .where(LinkPayout.id == row.id)
                .values(
                    state=state.value,
                    payout_id=payout_id or row.payout_id,
                    status_message=message,
                    corrected=LinkPayout.corrected | ((current, state) in CORRECTIONS),
                    updated_at=now,
                    last_status_at=now,
                )
            )
        return True

    # -- reading -------------------------------------------------------------------------

    def batch_exists(self, batch_id: str) -> bool:
        """True when a links batch with this id was registered (even with every row rejected)."""
        query = select(
            or_(
                exists().where(LinkPayout.batch_id == batch_id),
                exists().where(LinkReject.batch_id == batch_id),
            )
        )
        with self._reader.connect() as connection:
            return bool(connection.execute(query).scalar())

    def rejects(self, batch_id: str) -> list[Problem]:
        """The problems of the batch's rows that got no link, in file order."""
        # Here, not at the top: the webhook receiver and `payflow status` load the store, and
        # payflow.intake would load pandas for them.
        from payflow.intake.problems import Problem

        query = (
            select(LinkReject)
            .where(LinkReject.batch_id == batch_id, LinkReject.rule != KNOWN_RULE)
            .order_by(LinkReject.row_number, LinkReject.id)
        )
        with self._reader.connect() as connection:
            found = connection.execute(query).all()
        return [
            Problem(r.row_number, r.column_name, r.rule, r.message, r.external_id) for r in found
        ]

    def batch_count(self) -> int:
        """How many links batches were registered."""
        query = select(func.count(func.distinct(LinkPayout.batch_id)))
        with self._reader.connect() as connection:
            return int(connection.execute(query).scalar_one())

    def newest_batches(self, limit: int) -> list[LinksBatchLine]:
        """The `limit` newest links batches with a row registered, each with rows per state."""
        newest = (
            select(LinkPayout.batch_id, func.min(LinkPayout.created_at).label("created_at"))
            .group_by(LinkPayout.batch_id)
            .order_by(func.min(LinkPayout.created_at).desc(), LinkPayout.batch_id)
            .limit(limit)
            .subquery()
        )
        query = (
            select(
                LinkPayout.batch_id,
                func.min(LinkPayout.source_name),
                newest.c.created_at,
                LinkPayout.state,
                func.count(),
            )
            .join(newest, newest.c.batch_id == LinkPayout.batch_id)
            .group_by(LinkPayout.batch_id, newest.c.created_at, LinkPayout.state)
            .order_by(newest.c.created_at.desc(), LinkPayout.batch_id)
        )
        with self._reader.connect() as connection:
            found = connection.execute(query).all()
        lines: dict[str, LinksBatchLine] = {}
        for batch_id, source_name, created_at, state, count in found:
            line = lines.setdefault(batch_id, LinksBatchLine(batch_id, source_name, created_at, {}))
            line.counts[state] = int(count)
        return list(lines.values())

    def rows(self, batch_id: str) -> list[LinkView]:
        """Every registered row of the batch, in file order, with its claims summed up."""
        return self._views(LinkPayout.batch_id == batch_id)

    def known(self, batch_id: str) -> list[LinkView]:
        """The batch's rows whose externalId has a link from an earlier batch: that link's view
        (its batch, claims and payout) under this file's row number, in file order."""
        query = (
            select(LinkReject.row_number, LinkReject.external_id)
            .where(LinkReject.batch_id == batch_id, LinkReject.rule == KNOWN_RULE)
            .order_by(LinkReject.row_number)
        )
        with self._reader.connect() as connection:
            found = connection.execute(query).all()
        views = {
            v.external_id: v for v in self._views(LinkPayout.external_id.in_(_known_ids(batch_id)))
        }
        return [replace(views[ext], row_number=row) for row, ext in found if ext in views]

    def _views(self, where: Any) -> list[LinkView]:
        claims = (
            select(
                LinkClaim.external_id,
                func.count(LinkClaim.id).label("claims"),
                func.count(LinkClaim.last_opened_at).label("opened"),
                func.max(LinkClaim.expires_at).label("last_expires_at"),
                func.max(LinkClaim.issued_at).label("last_issued_at"),
                func.max(LinkClaim.last_opened_at).label("last_opened_at"),
            )
            .group_by(LinkClaim.external_id)
            .subquery()
        )
        query = (
            select(
                LinkPayout,
                claims.c.claims,
                claims.c.opened,
                claims.c.last_expires_at,
                claims.c.last_issued_at,
                claims.c.last_opened_at,
            )
            .outerjoin(claims, claims.c.external_id == LinkPayout.external_id)
            .where(where)
            .order_by(LinkPayout.row_number)
        )
        with self._reader.connect() as connection:
            found = connection.execute(query).all()
        return [_view(row) for row in found]

    def to_track(self, batch_id: str) -> list[str]:
        """externalIds worth a lookup: payouts not final, COMPLETED ones (the platform may
        correct one to FAILED with no webhook), and rows whose link was opened."""
        return [external_id for external_id, _ in self.to_track_with_states(batch_id)]

    def to_track_with_states(self, batch_id: str) -> list[tuple[str, str]]:
        """`to_track`'s externalIds, each with its state in the ledger."""
        pending = [RowState.CREATED.value, RowState.PROCESSING.value, RowState.COMPLETED.value]
        query = select(LinkPayout.external_id, LinkPayout.state).where(
            (LinkPayout.batch_id == batch_id) | LinkPayout.external_id.in_(_known_ids(batch_id)),
            LinkPayout.state.in_(pending)
            | ((LinkPayout.state == RowState.VALIDATED.value) & (LinkPayout.links_minted > 0)),
        )
        with self._reader.connect() as connection:
            return [(str(ext), str(state)) for ext, state in connection.execute(query)]


def _insert_values(batch_id: str, source_name: str, row: LinkRow, now: datetime) -> dict[str, Any]:
    return {
        "external_id": row.external_id,
        "batch_id": batch_id,
        "row_number": row.row_number,
        "source_name": source_name,
        "user_id": row.user_id,
        "amount": row.amount,
        "currency": CURRENCY,
        "service_id": row.service_id,
        "content_hash": row.content_hash(),
        "state": RowState.VALIDATED.value,
        "corrected": False,
        "links_minted": 0,
        "created_at": now,
        "updated_at": now,
    }


def _known_ids(batch_id: str) -> Any:
    """The externalIds of the batch's rows known from an earlier batch, as a subquery."""
    return select(LinkReject.external_id).where(
        LinkReject.batch_id == batch_id, LinkReject.rule == KNOWN_RULE
    )


def _reject_values(
    batch_id: str, now: datetime, row: int, external_id: str, column: str, rule: str, message: str
) -> dict[str, Any]:
    return {
        "batch_id": batch_id,
        "row_number": row,
        "external_id": external_id,
        "column_name": column,
        "rule": rule,
        "message": message,
        "created_at": now,
    }


def _view(row: Any) -> LinkView:
    return LinkView(
        batch_id=row.batch_id,
        row_number=row.row_number,
        external_id=row.external_id,
        user_id=row.user_id,
        amount=row.amount,
        service_id=row.service_id,
        state=RowState(row.state),
        payout_id=row.payout_id,
        status_message=row.status_message,
        corrected=row.corrected,
        links_minted=row.links_minted,
        claims=int(row.claims or 0),
        claims_opened=int(row.opened or 0),
        last_expires_at=row.last_expires_at,
        last_issued_at=row.last_issued_at,
        last_opened_at=row.last_opened_at,
    )


def record_link_event(ledger: Ledger, event: PayoutEvent) -> bool:
    """Record a webhook for a payout a recipient created from a link; False when not ours."""
    if not event.external_id:
        return False
    store = LinkStore(ledger.engine)
    try:
        return store.record_status(
            event.external_id, event.payout_id, event.status, event.status_message
        )
    except IllegalTransition as exc:
        logger.error("link webhook not recorded: %s", exc)
        return False
