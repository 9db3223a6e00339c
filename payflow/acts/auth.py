"""Authentication beyond the console's own sign-in: command-line sessions (`payflow login`) and
the one-time approval codes Prefect's pause form takes. Tokens and codes are random, shown once,
and kept in the ledger only as their SHA-256."""

from __future__ import annotations

import hashlib
import secrets
from datetime import timedelta

from sqlalchemy import insert, select, update

from payflow.acts.actor import APPROVAL_CODE, SESSION, Actor
from payflow.console.operators import check_password, operator_named
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action
from payflow.ledger.db import reader
from payflow.ledger.tables import ApprovalCode, OperatorSession

SESSION_HOURS = 8.0
CODE_MINUTES = 15.0
# Letters and digits a person reads and types without confusing two (no 0/O, 1/l/I).
_CODE_ALPHABET = "ABCDEFGHJKMNPQRSTUVWXYZ23456789"
CODE_LENGTH = 10


def _digest(secret: str) -> str:
    return hashlib.sha256(secret.strip().encode()).hexdigest()


def sign_in(
    ledger: Ledger, name: str, password: str, hours: float = SESSION_HOURS
) -> tuple[Actor, str] | None:
    """(the actor, a new session token) when the name and password match; else None."""
    operator = check_password(ledger, name, password)
    if operator is None:
        record_action(ledger, name.strip()[:64] or "?", "sign_in_failed", detail="command line")
        return None
    token = secrets.token_urlsafe(32)
    now = ledger.now()
    with ledger.engine.begin() as conn:
        conn.execute(
            insert(OperatorSession).values(
                token_hash=_digest(token),
                operator=operator.name,
                created_at=now,
                expires_at=now + timedelta(hours=hours),
            )
        )
    record_action(ledger, operator.name, "signed_in", detail="command line")
    return Actor(operator, SESSION), token


def session_actor(ledger: Ledger, token: str) -> Actor | None:
    """The operator of a live session token (not ended, not expired), else None."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(
            select(OperatorSession).where(OperatorSession.token_hash == _digest(token))
        ).first()
    if row is None or row.ended_at is not None or row.expires_at <= ledger.now():
        return None
    operator = operator_named(ledger, row.operator)
    return Actor(operator, SESSION) if operator else None


def session_expiry(ledger: Ledger, token: str) -> str | None:
    """When the session ends (ISO, UTC), for `payflow whoami`."""
    with reader(ledger.engine).connect() as conn:
        expires = conn.scalar(
            select(OperatorSession.expires_at).where(OperatorSession.token_hash == _digest(token))
        )
    return f"{expires:%Y-%m-%d %H:%M} UTC" if expires else None


def sign_out(ledger: Ledger, token: str) -> str | None:
    """End the session; the operator it was of, or None when it was not live."""
    actor = session_actor(ledger, token)
    with ledger.engine.begin() as conn:
        conn.execute(
            update(OperatorSession)
            .where(OperatorSession.token_hash == _digest(token), OperatorSession.ended_at.is_(None))
            .values(ended_at=ledger.now())
        )
    if actor is not None:
        record_action(ledger, actor.name, "signed_out", detail="command line")
    return actor.name if actor else None


def issue_code(ledger: Ledger, batch_id: str, checker: Actor, minutes: float = CODE_MINUTES) -> str:
    """A new one-time approval code for `checker` on `batch_id` (shown once, kept hashed)."""
    checker.require("checker", "gets an approval code")
    code = "".join(secrets.choice(_CODE_ALPHABET) for _ in range(CODE_LENGTH))
    now = ledger.now()
    with ledger.engine.begin() as conn:
        conn.execute(
            insert(ApprovalCode).values(
                code_hash=_digest(code.upper()),
                batch_id=batch_id,
                operator=checker.name,
                created_at=now,
                expires_at=now + timedelta(minutes=minutes),
            )
        )
    record_action(
        ledger, checker.name, "approval_code_issued", batch_id, detail=f"via {checker.via}"
    )
    return code


def redeem_code(ledger: Ledger, batch_id: str, code: str) -> Actor | None:
    """The checker a code was issued to, when it is for this batch, unused and not expired;
    it is then used up. None otherwise (nothing is said of why: a guess learns nothing)."""
    now = ledger.now()
    digest = _digest(code.upper())
    with ledger.engine.begin() as conn:
        used = conn.execute(
            update(ApprovalCode)
            .where(
                ApprovalCode.code_hash == digest,
                ApprovalCode.batch_id == batch_id,
                ApprovalCode.used_at.is_(None),
                ApprovalCode.expires_at > now,
            )
            .values(used_at=now)
        )
        if not used.rowcount:
            return None
        name = conn.scalar(select(ApprovalCode.operator).where(ApprovalCode.code_hash == digest))
    operator = operator_named(ledger, name) if name else None
    return Actor(operator, APPROVAL_CODE) if operator else None
