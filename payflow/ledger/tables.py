"""The ledger's tables as typed SQLAlchemy models; the Alembic migrations must match them.

A test compares these models with the migrated schema, so a change here without a migration
fails CI.
"""

from __future__ import annotations

from collections.abc import Sequence
from datetime import UTC, datetime
from decimal import Decimal
from typing import Any

from sqlalchemy import (
    Boolean,
    DateTime,
    Dialect,
    Float,
    ForeignKey,
    Index,
    Integer,
    String,
    Text,
    UniqueConstraint,
)
from sqlalchemy.orm import DeclarativeBase, Mapped, mapped_column
from sqlalchemy.types import TypeDecorator

from payflow.model import PayoutInstruction

INSTRUCTION_FIELDS = PayoutInstruction._fields
"""Payout columns that rebuild a PayoutInstruction (the POST), named as the instruction's fields."""

EXTERNAL_ID_LENGTH = 255
BATCH_ID_LENGTH = 128
STATE_LENGTH = 24
AMOUNT_LENGTH = 64
USER_LENGTH = 255


class UTCDateTime(TypeDecorator[datetime]):
    """Aware UTC datetimes on every backend (SQLite keeps no zone, so naive means UTC there)."""

    impl = DateTime(timezone=True)
    cache_ok = True

    def process_bind_param(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        if value.tzinfo is None:
            raise ValueError("the ledger stores aware datetimes only")
        value = value.astimezone(UTC)
        # SQLite compares the stored text, so every value must be written the same way.
        return value.replace(tzinfo=None) if dialect.name == "sqlite" else value

    def process_result_value(self, value: datetime | None, dialect: Dialect) -> datetime | None:
        if value is None:
            return None
        return value.replace(tzinfo=UTC) if value.tzinfo is None else value.astimezone(UTC)


def decimal_text(value: Decimal) -> str:
    """The stored text of an amount: exact, scale kept (0.10 stays 0.10), never a float."""
    if not isinstance(value, Decimal) or not value.is_finite():
        raise ValueError("amounts must be finite decimal.Decimal values")
    return format(value, "f")


class DecimalText(TypeDecorator[Decimal]):
    """A Decimal kept as its exact text: SQLite's NUMERIC would round large amounts to a float."""

    impl = String(AMOUNT_LENGTH)
    cache_ok = True

    def process_bind_param(self, value: Decimal | None, dialect: Dialect) -> str | None:
        return None if value is None else decimal_text(value)

    def process_result_value(self, value: Any, dialect: Dialect) -> Decimal | None:
        return None if value is None else Decimal(value)


class Base(DeclarativeBase):
    """Declarative base whose metadata Alembic migrates."""


class Batch(Base):
    """One uploaded file, registered once."""

    __tablename__ = "batches"

    batch_id: Mapped[str] = mapped_column(String(BATCH_ID_LENGTH), primary_key=True)
    source_name: Mapped[str] = mapped_column(Text)
    # The XLSX sheet read (None: a CSV, or registered before 0012): two sheets of one workbook
    # are two batches of the same file name.
    sheet: Mapped[str | None] = mapped_column(Text)
    total_rows: Mapped[int] = mapped_column(Integer)
    valid_rows: Mapped[int] = mapped_column(Integer)
    rejected_rows: Mapped[int] = mapped_column(Integer)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # A rerun batch names the batch whose failed rows it sends again.
    rerun_of: Mapped[str | None] = mapped_column(String(BATCH_ID_LENGTH))
    # Who registered the batch (the maker), so the maker can never approve it.
    made_by: Mapped[str | None] = mapped_column(String(USER_LENGTH))


class Payout(Base):
    """One payout per externalId, ever: what to send, and where it stands."""

    __tablename__ = "payouts"
    __table_args__ = (
        Index("ix_payouts_batch_state", "batch_id", "state", "id"),
        Index("ix_payouts_batch_next_poll", "batch_id", "next_poll_at"),
        Index("ix_payouts_repeat_key", "repeat_key", "state"),
        Index("ix_payouts_user_key", "user_key", "state"),
        Index("ix_payouts_name_key", "name_key", "state"),
        Index("ix_payouts_content_hash", "content_hash"),
        Index("ix_payouts_recipient", "requisites", "currency"),
        # One child per parent: a root's attempts form one chain, so it has one live attempt.
        UniqueConstraint("reruns_external_id", name="uq_payouts_reruns_external_id"),
        UniqueConstraint("root_external_id", "attempt", name="uq_payouts_root_attempt"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_LENGTH), unique=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"))
    row_number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))
    amount: Mapped[Decimal] = mapped_column(DecimalText())
    currency: Mapped[str] = mapped_column(String(8))
    payment_type: Mapped[str] = mapped_column(String(32))
    requisites: Mapped[str] = mapped_column(String(255))
    name: Mapped[str] = mapped_column(String(255))
    user_id: Mapped[str] = mapped_column(String(255))
    service_id: Mapped[int | None] = mapped_column(Integer)
    bank_name: Mapped[str | None] = mapped_column(String(255))
    note: Mapped[str | None] = mapped_column(Text)
    user_email: Mapped[str | None] = mapped_column(String(255))
    user_phone: Mapped[str | None] = mapped_column(String(64))
    user_ip: Mapped[str | None] = mapped_column(String(64))
    callback_url: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(STATE_LENGTH))
    payout_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    status_message: Mapped[str | None] = mapped_column(Text)
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(128))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    corrected: Mapped[bool] = mapped_column(Boolean, default=False)
    reruns_external_id: Mapped[str | None] = mapped_column(String(EXTERNAL_ID_LENGTH))
    # The first payout of the chain this one reruns (None for a first attempt) and its number.
    root_external_id: Mapped[str | None] = mapped_column(String(EXTERNAL_ID_LENGTH))
    attempt: Mapped[int] = mapped_column(Integer, default=0, server_default="0")
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_status_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    next_poll_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # model.repeat_key: finds the same recipient, amount and currency under another externalId.
    repeat_key: Mapped[str | None] = mapped_column(String(64))
    # model.person_key: the same person (by userId, or by name) paid the same amount and currency.
    user_key: Mapped[str | None] = mapped_column(String(64))
    name_key: Mapped[str | None] = mapped_column(String(64))


INSTRUCTION_COLUMNS = tuple(getattr(Payout, name) for name in INSTRUCTION_FIELDS)
"""The Payout columns of INSTRUCTION_FIELDS, in their order: a query that selects them first
reads each row's instruction with `instruction_from_row`."""


def instruction_from_row(row: Sequence[Any]) -> PayoutInstruction:
    """The instruction in the leading values of a row selected as `INSTRUCTION_COLUMNS, ...`.

    By position, not by name: reading 15 fields by name off a SQLAlchemy Row cost about 8 us a
    row, and a claim reads one per row it sends."""
    return PayoutInstruction._make(row[: len(INSTRUCTION_FIELDS)])


class BatchRow(Base):
    """One source row of a batch and what registering it decided."""

    __tablename__ = "batch_rows"
    __table_args__ = (
        UniqueConstraint("batch_id", "row_number", name="uq_batch_rows_batch_row"),
        Index("ix_batch_rows_batch_disposition", "batch_id", "disposition"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"))
    row_number: Mapped[int] = mapped_column(Integer)
    external_id: Mapped[str | None] = mapped_column(String(EXTERNAL_ID_LENGTH))
    disposition: Mapped[str] = mapped_column(String(16))
    reasons: Mapped[str | None] = mapped_column(Text)  # JSON list of problems
    # The currency of a row whose payout is not its own: a conflicting row's, and a rejected
    # row's when its cell is an ISO 4217 code. Reports count the row under it; every other
    # row's currency is its payout's.
    currency: Mapped[str | None] = mapped_column(String(3))
    # Such a row's amount (when its cell broke no rule), paymentType and name, as the file had
    # them: the report shows the operator the row to fix.
    amount: Mapped[Decimal | None] = mapped_column(DecimalText())
    payment_type: Mapped[str | None] = mapped_column(Text)
    name: Mapped[str | None] = mapped_column(Text)
    # Such a row's requisites masked to their last four characters (design.md, invariant 6:
    # never the whole), so two rejected rows of one recipient are told from another's.
    requisites_masked: Mapped[str | None] = mapped_column(Text)


class BatchWarning(Base):
    """A warning the maker saw when the batch was validated (`records.IntakeWarning`)."""

    __tablename__ = "batch_warnings"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"), index=True)
    row_number: Mapped[int] = mapped_column(Integer)
    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_LENGTH))
    column: Mapped[str] = mapped_column(Text)
    rule: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text)


class RepeatAcknowledgement(Base):
    """An operator's `--allow-repeat` for a batch: its repeats are paid, not held."""

    __tablename__ = "repeat_acknowledgements"

    batch_id: Mapped[str] = mapped_column(String(BATCH_ID_LENGTH), primary_key=True)
    acknowledged_at: Mapped[datetime] = mapped_column(UTCDateTime())


class StatusEvent(Base):
    """Append-only history of every state change: the proof that statuses only move forward."""

    __tablename__ = "status_events"
    # Trackers ask whether webhooks are still coming in: the newest webhook moves, by time.
    __table_args__ = (Index("ix_status_events_source_at", "source", "at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    external_id: Mapped[str] = mapped_column(ForeignKey("payouts.external_id"), index=True)
    from_state: Mapped[str | None] = mapped_column(String(STATE_LENGTH))
    to_state: Mapped[str] = mapped_column(String(STATE_LENGTH))
    source: Mapped[str] = mapped_column(String(16))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    status_message: Mapped[str | None] = mapped_column(Text)


class ServiceCheck(Base):
    """The service's latest word about a payout (one row per externalId): what it last said,
    when, and how it was learned (`source`: webhook, poll, reconcile or rerun; migration 0019)."""

    __tablename__ = "service_checks"

    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_LENGTH), primary_key=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"), index=True)
    found: Mapped[bool] = mapped_column(Boolean)
    payout_id: Mapped[str | None] = mapped_column(String(64))
    status: Mapped[str | None] = mapped_column(String(STATE_LENGTH))
    status_message: Mapped[str | None] = mapped_column(Text)
    amount: Mapped[Decimal | None] = mapped_column(DecimalText())
    currency: Mapped[str | None] = mapped_column(String(8))
    checked_at: Mapped[datetime] = mapped_column(UTCDateTime())
    source: Mapped[str | None] = mapped_column(String(16))


class ReportVersion(Base):
    """One reconciliation report written for a batch: its files, who, when, what changed."""

    __tablename__ = "report_versions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"), index=True)
    csv_path: Mapped[str] = mapped_column(Text)
    xlsx_path: Mapped[str] = mapped_column(Text)
    made_by: Mapped[str] = mapped_column(String(128))
    made_at: Mapped[datetime] = mapped_column(UTCDateTime())
    changes: Mapped[str] = mapped_column(Text)  # what changed since the version before, in words
    digest: Mapped[str] = mapped_column(String(64))  # what the report says: a repeat is kept once
    figures: Mapped[str] = mapped_column(Text)  # JSON {figure: value}, compared by the next version


class Finding(Base):
    """One discrepancy of one source row: open, acknowledged or resolved (see finding_events)."""

    __tablename__ = "findings"
    __table_args__ = (
        UniqueConstraint("batch_id", "row_number", "kind", name="uq_findings_row_kind"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"))
    row_number: Mapped[int] = mapped_column(Integer)
    external_id: Mapped[str | None] = mapped_column(String(EXTERNAL_ID_LENGTH))
    kind: Mapped[str] = mapped_column(String(32))
    state: Mapped[str] = mapped_column(String(16))
    detail: Mapped[str] = mapped_column(Text)
    opened_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())


class FindingEvent(Base):
    """Append-only history of a finding: every open, acknowledge, resolve and reopen."""

    __tablename__ = "finding_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    finding_id: Mapped[int] = mapped_column(ForeignKey("findings.id"), index=True)
    from_state: Mapped[str | None] = mapped_column(String(16))
    to_state: Mapped[str] = mapped_column(String(16))
    actor: Mapped[str] = mapped_column(String(128))
    detail: Mapped[str | None] = mapped_column(Text)
    at: Mapped[datetime] = mapped_column(UTCDateTime())


class BalanceSnapshot(Base):
    """The merchant balance of one currency, read when a batch starts paying or is reconciled."""

    __tablename__ = "balance_snapshots"
    __table_args__ = (Index("ix_balance_snapshots_batch", "batch_id", "phase", "taken_at"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"))
    phase: Mapped[str] = mapped_column(String(16))
    currency: Mapped[str] = mapped_column(String(8))
    available: Mapped[Decimal | None] = mapped_column(DecimalText())
    held: Mapped[Decimal | None] = mapped_column(DecimalText())
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime())


class Refund(Base):
    """One refund per externalId, ever: which order to refund, and where the refund stands.

    The same discipline as payouts (states.REFUNDS): SUBMITTING before the POST, statuses
    forward only, a final status changed only by a recorded correction."""

    __tablename__ = "refunds"
    __table_args__ = (Index("ix_refunds_batch_state", "batch_id", "state", "id"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_LENGTH), unique=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"))
    row_number: Mapped[int] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))
    order_id: Mapped[str] = mapped_column(String(64), index=True)
    amount: Mapped[Decimal] = mapped_column(DecimalText())
    currency: Mapped[str] = mapped_column(String(8))
    amount_given: Mapped[bool] = mapped_column(Boolean, default=False)
    reason: Mapped[str | None] = mapped_column(Text)
    callback_url: Mapped[str | None] = mapped_column(Text)
    state: Mapped[str] = mapped_column(String(STATE_LENGTH))
    refund_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    status_message: Mapped[str | None] = mapped_column(Text)
    debit_amount: Mapped[Decimal | None] = mapped_column(DecimalText())
    debit_currency: Mapped[str | None] = mapped_column(String(8))
    debit_basis: Mapped[str | None] = mapped_column(String(32))
    order_status: Mapped[str | None] = mapped_column(String(STATE_LENGTH))
    attempts: Mapped[int] = mapped_column(Integer, default=0)
    claimed_by: Mapped[str | None] = mapped_column(String(128))
    lease_until: Mapped[datetime | None] = mapped_column(UTCDateTime())
    corrected: Mapped[bool] = mapped_column(Boolean, default=False)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_status_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class RefundRow(Base):
    """One source row of a refund batch and what registering it decided (REJECTED: why)."""

    __tablename__ = "refund_rows"
    __table_args__ = (UniqueConstraint("batch_id", "row_number", name="uq_refund_rows_batch_row"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"))
    row_number: Mapped[int] = mapped_column(Integer)
    external_id: Mapped[str | None] = mapped_column(String(EXTERNAL_ID_LENGTH))
    order_id: Mapped[str | None] = mapped_column(Text)
    disposition: Mapped[str] = mapped_column(String(16))
    reasons: Mapped[str | None] = mapped_column(Text)  # JSON list of problems


class RefundEvent(Base):
    """Append-only history of every refund state change (and its order moving to REFUND)."""

    __tablename__ = "refund_events"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    external_id: Mapped[str] = mapped_column(ForeignKey("refunds.external_id"), index=True)
    from_state: Mapped[str | None] = mapped_column(String(STATE_LENGTH))
    to_state: Mapped[str] = mapped_column(String(STATE_LENGTH))
    source: Mapped[str] = mapped_column(String(16))
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    status_message: Mapped[str | None] = mapped_column(Text)


class LinkPayout(Base):
    """A payout the recipient creates through the widget from a claim: one per externalId."""

    __tablename__ = "link_payouts"
    __table_args__ = (
        UniqueConstraint("batch_id", "row_number", name="uq_link_payouts_batch_row"),
        Index("ix_link_payouts_batch_state", "batch_id", "state"),
    )

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_LENGTH), unique=True)
    batch_id: Mapped[str] = mapped_column(String(BATCH_ID_LENGTH))
    row_number: Mapped[int] = mapped_column(Integer)
    source_name: Mapped[str] = mapped_column(Text)
    user_id: Mapped[str] = mapped_column(String(255))
    amount: Mapped[Decimal] = mapped_column(DecimalText())
    currency: Mapped[str] = mapped_column(String(8))
    service_id: Mapped[int | None] = mapped_column(Integer)
    content_hash: Mapped[str] = mapped_column(String(64))
    state: Mapped[str] = mapped_column(String(STATE_LENGTH))  # VALIDATED until a payout exists
    payout_id: Mapped[str | None] = mapped_column(String(64), unique=True)
    status_message: Mapped[str | None] = mapped_column(Text)
    corrected: Mapped[bool] = mapped_column(Boolean, default=False)
    links_minted: Mapped[int] = mapped_column(Integer, default=0)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    updated_at: Mapped[datetime] = mapped_column(UTCDateTime())
    last_status_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class LinkReject(Base):
    """One problem of a links file's row that got no link (a broken rule or a conflicting
    externalId): every links report of the batch lists it, not only the first."""

    __tablename__ = "link_rejects"
    __table_args__ = (Index("ix_link_rejects_batch_row", "batch_id", "row_number"),)

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(String(BATCH_ID_LENGTH))
    row_number: Mapped[int] = mapped_column(Integer)
    # Text: a rejected cell may be longer than any valid one (an over-long externalId).
    external_id: Mapped[str] = mapped_column(Text)
    column_name: Mapped[str] = mapped_column(Text)
    rule: Mapped[str] = mapped_column(String(64))
    message: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())


class LinkClaim(Base):
    """One claim URL handed to a recipient: only the SHA-256 of its random token is kept."""

    __tablename__ = "link_claims"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    token_hash: Mapped[str] = mapped_column(String(64), unique=True)
    external_id: Mapped[str] = mapped_column(ForeignKey("link_payouts.external_id"), index=True)
    issued_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    opened_count: Mapped[int] = mapped_column(Integer, default=0)
    last_opened_at: Mapped[datetime | None] = mapped_column(UTCDateTime())
    # SHA-256 of the cookie of the first device that opened the claim: the only one it serves.
    device_hash: Mapped[str | None] = mapped_column(String(64))


class Approval(Base):
    """Append-only record of every approval decision, bound to what the approver saw."""

    __tablename__ = "approvals"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"), index=True)
    approver: Mapped[str] = mapped_column(String(USER_LENGTH))
    decision: Mapped[str] = mapped_column(String(16))  # approve | decline
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    content_hash: Mapped[str] = mapped_column(String(64))
    totals: Mapped[str] = mapped_column(Text)  # JSON {currency: exact amount text}
    rows: Mapped[int] = mapped_column(Integer)
    acknowledged: Mapped[str] = mapped_column(Text)  # JSON list of warning keys seen
    note: Mapped[str | None] = mapped_column(Text)
    via: Mapped[str] = mapped_column(String(16))  # cli | prefect


class ConsoleOperator(Base):
    """A person payflow knows (console and command line): roles, password hashed (argon2)."""

    __tablename__ = "console_operators"

    name: Mapped[str] = mapped_column(String(USER_LENGTH), primary_key=True)
    role: Mapped[str] = mapped_column(String(64))  # roles, comma-separated: maker,checker,admin
    password_hash: Mapped[str] = mapped_column(Text)
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    # The OS account whose files a deployed run takes as this operator's (the daily inbox).
    os_account: Mapped[str | None] = mapped_column(String(USER_LENGTH), unique=True)
    # Where this person is told what needs them (an e-mail address an admin sets): payflow.notify.
    notify_to: Mapped[str | None] = mapped_column(String(254))


class ApprovalPolicyVersion(Base):
    """Append-only: every version of the approval policy, who proposed it and who confirmed it.

    The active policy is the newest confirmed version; none at all: the shipped default, stored
    as version 1 the first time it is asked for."""

    __tablename__ = "approval_policies"

    version: Mapped[int] = mapped_column(Integer, primary_key=True)
    body: Mapped[str] = mapped_column(Text)  # the YAML as given
    proposed_by: Mapped[str] = mapped_column(String(USER_LENGTH))
    proposed_at: Mapped[datetime] = mapped_column(UTCDateTime())
    confirmed_by: Mapped[str | None] = mapped_column(String(USER_LENGTH))
    confirmed_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class BatchTerms(Base):
    """What a batch's approval was held to when its maker submitted it: the policy version, the
    approvals needed then, and the maker (with how payflow knew the maker)."""

    __tablename__ = "batch_terms"

    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"), primary_key=True)
    policy_version: Mapped[int] = mapped_column(ForeignKey("approval_policies.version"))
    steps: Mapped[int] = mapped_column(Integer)
    maker: Mapped[str | None] = mapped_column(String(USER_LENGTH))
    maker_via: Mapped[str | None] = mapped_column(String(32))  # session | console | os-account...
    recorded_at: Mapped[datetime] = mapped_column(UTCDateTime())


class OperatorSession(Base):
    """A command-line sign-in (`payflow login`): the token is kept only as its SHA-256."""

    __tablename__ = "operator_sessions"

    token_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    operator: Mapped[str] = mapped_column(String(USER_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ApprovalCode(Base):
    """A one-time code a checker types in Prefect's pause form: bound to one batch and one
    checker, short-lived, used once; kept only as its SHA-256."""

    __tablename__ = "approval_codes"

    code_hash: Mapped[str] = mapped_column(String(64), primary_key=True)
    batch_id: Mapped[str] = mapped_column(ForeignKey("batches.batch_id"), index=True)
    operator: Mapped[str] = mapped_column(String(USER_LENGTH))
    created_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())
    used_at: Mapped[datetime | None] = mapped_column(UTCDateTime())


class ConsoleAction(Base):
    """Append-only: who did what in the console, when (sign-in, upload, submit, approve...)."""

    __tablename__ = "console_actions"

    id: Mapped[int] = mapped_column(Integer, primary_key=True, autoincrement=True)
    at: Mapped[datetime] = mapped_column(UTCDateTime())
    actor: Mapped[str] = mapped_column(String(USER_LENGTH))
    action: Mapped[str] = mapped_column(String(32))
    batch_id: Mapped[str | None] = mapped_column(String(BATCH_ID_LENGTH), index=True)
    detail: Mapped[str | None] = mapped_column(Text)


class PayRunBeat(Base):
    """A pay run's heartbeat: the last time a live run of the batch said so (one row a run).

    A worker that dies writes no end, so a run is known alive by its beat being recent, which
    every console and worker on the ledger sees alike, not by which process holds it."""

    __tablename__ = "pay_run_beats"

    run_id: Mapped[str] = mapped_column(String(64), primary_key=True)
    batch_id: Mapped[str] = mapped_column(String(BATCH_ID_LENGTH), index=True)
    label: Mapped[str] = mapped_column(Text)  # where it runs: "flow run calm-owl", a console
    started_at: Mapped[datetime] = mapped_column(UTCDateTime())
    beat_at: Mapped[datetime] = mapped_column(UTCDateTime())
    ended_at: Mapped[datetime | None] = mapped_column(UTCDateTime())  # None: alive, or died
    # The silence after which its own process counts it dead (its PAYFLOW_RUN_STALE_AFTER);
    # None: written before runs recorded theirs, when it was always 60 s.
    stale_after_s: Mapped[float | None] = mapped_column(Float)


class ServiceBinding(Base):
    """The kind of payments service the ledger's rows were sent to (one row, id 1): the embedded
    sandbox or a payments API. A row paid on the sandbox reads COMPLETED, so the same file run
    against the API found it already paid and paid nobody; a ledger holds one kind only, and of
    an API one merchant (the merchantId its token answers to, recorded by the first API run)."""

    __tablename__ = "service_binding"

    id: Mapped[int] = mapped_column(Integer, primary_key=True)
    kind: Mapped[str] = mapped_column(String(STATE_LENGTH))
    bound_at: Mapped[datetime] = mapped_column(UTCDateTime())
    merchant_id: Mapped[str | None] = mapped_column(Text)


class Lease(Base):
    """A named lease: one holder until `expires_at` (the watchdog resuming a batch, a
    notification sent once); taken again by anyone once expired."""

    __tablename__ = "leases"

    name: Mapped[str] = mapped_column(String(255), primary_key=True)
    holder: Mapped[str] = mapped_column(String(255))
    taken_at: Mapped[datetime] = mapped_column(UTCDateTime())
    expires_at: Mapped[datetime] = mapped_column(UTCDateTime())


class KeptList(Base):
    """A list of the payments service that validation needs, as the last process holding the
    API token fetched it: the services list (key "services") or one SBP phone's banks (key
    "banks:" and the phone). A maker's process without the token validates with these."""

    __tablename__ = "kept_lists"

    key: Mapped[str] = mapped_column(String(255), primary_key=True)
    body: Mapped[str] = mapped_column(Text)  # the list as JSON
    fetched_at: Mapped[datetime] = mapped_column(UTCDateTime())


class UncheckedRow(Base):
    """A registered row whose bank or service its maker's process could not check (no API
    token, no kept list): never claimed for sending until a paying process has checked it."""

    __tablename__ = "unchecked_rows"

    external_id: Mapped[str] = mapped_column(String(EXTERNAL_ID_LENGTH), primary_key=True)
    batch_id: Mapped[str] = mapped_column(String(BATCH_ID_LENGTH), index=True)
    checks: Mapped[str] = mapped_column(String(32))  # "bank", "service" or "bank,service"
