"""Console operators (maker, checker) with argon2 password hashes."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Literal, get_args

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import insert, select

from payflow.approvals import person_key
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action
from payflow.ledger.db import reader
from payflow.ledger.tables import ConsoleOperator

Role = Literal["maker", "checker"]
ROLES: tuple[str, ...] = get_args(Role)
MIN_PASSWORD = 8
_HASHER = PasswordHasher()
# Verified against when the name is unknown, so a wrong name costs as long as a wrong password.
_DUMMY_HASH = _HASHER.hash("not a password of anyone")


class OperatorError(ValueError):
    """The operator cannot be created (bad name, role or password, or the name is taken)."""


@dataclass(frozen=True, slots=True)
class Operator:
    """A signed-in person: name and role."""

    name: str
    role: str


def add_operator(ledger: Ledger, name: str, role: str, password: str) -> Operator:
    """Create an operator; the password is stored only as an argon2 hash."""
    name = name.strip()
    if not name or len(name) > 64 or not name.isprintable():
        raise OperatorError("a name is 1 to 64 printable characters")
    if role not in ROLES:
        raise OperatorError(f"role must be one of {', '.join(ROLES)}")
    if len(password) < MIN_PASSWORD:
        raise OperatorError(f"a password has at least {MIN_PASSWORD} characters")
    with ledger.engine.begin() as conn:
        # "Mia" beside "mia" would be a second person to the approval rules' eyes.
        taken = [
            other
            for other in conn.scalars(select(ConsoleOperator.name))
            if person_key(other) == person_key(name)
        ]
        if taken:
            raise OperatorError(f"operator {taken[0]!r} already exists")
        conn.execute(
            insert(ConsoleOperator).values(
                name=name, role=role, password_hash=_HASHER.hash(password), created_at=ledger.now()
            )
        )
    record_action(ledger, name, "operator_added", detail=f"role {role}")
    return Operator(name, role)


def check_password(ledger: Ledger, name: str, password: str) -> Operator | None:
    """The operator when the name and password match, else None (same work either way)."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(
            select(ConsoleOperator.name, ConsoleOperator.role, ConsoleOperator.password_hash).where(
                ConsoleOperator.name == name.strip()
            )
        ).first()
    try:
        _HASHER.verify(row.password_hash if row else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return None
    return Operator(row.name, row.role) if row else None


def operator_count(ledger: Ledger) -> int:
    """How many operators exist (0: the first-run message tells how to add one)."""
    with reader(ledger.engine).connect() as conn:
        return len(conn.execute(select(ConsoleOperator.name)).all())
