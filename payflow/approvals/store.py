"""The approval policy as ledger data: its versions, and the terms each batch was submitted under.

The active policy is the newest confirmed version. A ledger with none stores the shipped default
as version 1 the first time it is asked. A batch's terms (policy version, approvals needed then,
its maker and how payflow knew the maker) are written once, when its maker submits it; every
path that pays reads them, never a file of its own environment.
"""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from sqlalchemy import desc, insert, select, update
from sqlalchemy.exc import IntegrityError

from payflow.approvals.policy import (
    ApprovalPolicy,
    PolicyError,
    default_policy_text,
    parse_policy,
)
from payflow.ledger import Ledger
from payflow.ledger.db import reader
from payflow.ledger.tables import ApprovalPolicyVersion, BatchTerms

SHIPPED_DEFAULT = "payflow (shipped default)"


@dataclass(frozen=True, slots=True)
class PolicyVersion:
    """One version of the policy: its rules, text, who proposed and who confirmed it."""

    version: int
    policy: ApprovalPolicy
    body: str
    proposed_by: str
    proposed_at: datetime
    confirmed_by: str | None
    confirmed_at: datetime | None

    @property
    def confirmed(self) -> bool:
        """True once it is (or was) the active policy."""
        return self.confirmed_by is not None


@dataclass(frozen=True, slots=True)
class Terms:
    """What the batch's approval is held to: recorded once, when it was submitted."""

    batch_id: str
    policy_version: int
    steps: int
    maker: str | None  # None: registered with no signed-in maker (a deployed run's file)
    maker_via: str | None
    recorded_at: datetime


def _version(row: ApprovalPolicyVersion) -> PolicyVersion:
    return PolicyVersion(
        row.version,
        parse_policy(row.body, f"(ledger policy version {row.version})"),
        row.body,
        row.proposed_by,
        row.proposed_at,
        row.confirmed_by,
        row.confirmed_at,
    )


def policy_versions(ledger: Ledger) -> list[PolicyVersion]:
    """Every version, oldest first (the shipped default stored as 1 when there is none)."""
    active_policy(ledger)
    with reader(ledger.engine).connect() as conn:
        rows = conn.execute(select(ApprovalPolicyVersion).order_by(ApprovalPolicyVersion.version))
        return [_version(row) for row in rows]  # type: ignore[arg-type]


def policy_version(ledger: Ledger, version: int) -> PolicyVersion:
    """One version by number; PolicyError when the ledger has none such."""
    active_policy(ledger)
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(
            select(ApprovalPolicyVersion).where(ApprovalPolicyVersion.version == version)
        ).first()
    if row is None:
        raise PolicyError(f"the ledger has no approval policy version {version}")
    return _version(row)  # type: ignore[arg-type]


def active_policy(ledger: Ledger) -> PolicyVersion:
    """The newest confirmed version; with none, the shipped default stored as version 1."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(
            select(ApprovalPolicyVersion)
            .where(ApprovalPolicyVersion.confirmed_by.is_not(None))
            .order_by(desc(ApprovalPolicyVersion.version))
            .limit(1)
        ).first()
    if row is not None:
        return _version(row)  # type: ignore[arg-type]
    now = ledger.now()
    try:
        with ledger.engine.begin() as conn:
            conn.execute(
                insert(ApprovalPolicyVersion).values(
                    version=1,
                    body=default_policy_text(),
                    proposed_by=SHIPPED_DEFAULT,
                    proposed_at=now,
                    confirmed_by=SHIPPED_DEFAULT,
                    confirmed_at=now,
                )
            )
    except IntegrityError:  # another process stored it a moment ago
        pass
    return active_policy(ledger)


def add_version(ledger: Ledger, body: str, proposed_by: str, *, confirmed: bool) -> PolicyVersion:
    """Store a new version (active at once when `confirmed`, else waiting for a second admin)."""
    parse_policy(body, "(the proposed policy)")
    current = policy_versions(ledger)[-1].version
    now = ledger.now()
    with ledger.engine.begin() as conn:
        conn.execute(
            insert(ApprovalPolicyVersion).values(
                version=current + 1,
                body=body,
                proposed_by=proposed_by,
                proposed_at=now,
                confirmed_by=proposed_by if confirmed else None,
                confirmed_at=now if confirmed else None,
            )
        )
    return policy_version(ledger, current + 1)


def confirm_version(ledger: Ledger, version: int, confirmed_by: str) -> bool:
    """Make a proposed version active; False when it was confirmed already."""
    with ledger.engine.begin() as conn:
        result = conn.execute(
            update(ApprovalPolicyVersion)
            .where(
                ApprovalPolicyVersion.version == version,
                ApprovalPolicyVersion.confirmed_by.is_(None),
            )
            .values(confirmed_by=confirmed_by, confirmed_at=ledger.now())
        )
    return bool(result.rowcount)


def terms_of(ledger: Ledger, batch_id: str) -> Terms | None:
    """The batch's recorded terms, or None before its maker submitted it."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(select(BatchTerms).where(BatchTerms.batch_id == batch_id)).first()
    if row is None:
        return None
    return Terms(
        row.batch_id, row.policy_version, row.steps, row.maker, row.maker_via, row.recorded_at
    )


def write_terms(
    ledger: Ledger,
    batch_id: str,
    *,
    policy_version: int,
    steps: int,
    maker: str | None,
    maker_via: str | None,
) -> Terms:
    """Record the batch's terms once; a batch recorded with no maker gets one (its submission),
    and nothing else is ever changed. The terms as the ledger holds them after."""
    try:
        with ledger.engine.begin() as conn:
            conn.execute(
                insert(BatchTerms).values(
                    batch_id=batch_id,
                    policy_version=policy_version,
                    steps=steps,
                    maker=maker,
                    maker_via=maker_via,
                    recorded_at=ledger.now(),
                )
            )
    except IntegrityError:
        if maker is not None:
            with ledger.engine.begin() as conn:
                conn.execute(
                    update(BatchTerms)
                    .where(BatchTerms.batch_id == batch_id, BatchTerms.maker.is_(None))
                    .values(maker=maker, maker_via=maker_via)
                )
    terms = terms_of(ledger, batch_id)
    assert terms is not None
    return terms
