"""Operators (maker, checker, admin; one person may hold several roles) with argon2 password
hashes: the one store of people for every surface (console, command line, Prefect's form)."""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any, Literal, get_args

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError
from sqlalchemy import insert, select, update

from payflow.approvals import person_key
from payflow.ledger import Ledger
from payflow.ledger.db import reader
from payflow.ledger.tables import ConsoleOperator

Role = Literal["maker", "checker", "admin"]
ROLES: tuple[str, ...] = get_args(Role)
MIN_PASSWORD = 8
_HASHER = PasswordHasher()
# Verified against when the name is unknown, so a wrong name costs as long as a wrong password.
# Written out, not hashed at import: every payflow process imports this module, and the hash
# cost each one a quarter of a CPU second and 64 MB. A test checks it has _HASHER's parameters.
_DUMMY_HASH = (
    "$argon2id$v=19$m=65536,t=3,p=4$DfN/5/Wv5phTooqzLhmdOA"
    "$JAZEeNjDLbZg/rygt7WDJ9XFlv4wZyJxPz9JbLajPpQ"
)
# name@domain.tld, no spaces, no URL: the address goes into a mail URL's `to` parameter.
_ADDRESS = re.compile(r"[^@\s/:?&=]+@[^@\s/:?&=]+\.[^@\s/:?&=]+")


class OperatorError(ValueError):
    """The operator cannot be created (bad name, role or password, or the name is taken)."""


@dataclass(frozen=True, slots=True)
class Operator:
    """A person payflow knows: name, roles, and the OS account whose files are theirs."""

    name: str
    roles: tuple[str, ...]
    os_account: str | None = None
    notify_to: str | None = None  # their own e-mail address for notifications

    def has(self, role: str) -> bool:
        """True when the operator holds `role`."""
        return role in self.roles

    @property
    def role(self) -> str:
        """The roles as one word list ("maker, checker"), for a line that names them."""
        return ", ".join(self.roles)


def parse_roles(given: str | list[str] | tuple[str, ...]) -> tuple[str, ...]:
    """Roles from "maker,checker" or a list; OperatorError for an unknown or missing one."""
    words = [w for one in ([given] if isinstance(given, str) else given) for w in one.split(",")]
    roles = tuple(dict.fromkeys(w.strip() for w in words if w.strip()))
    unknown = [r for r in roles if r not in ROLES]
    if not roles or unknown:
        raise OperatorError(f"role must be one of {', '.join(ROLES)}")
    return tuple(r for r in ROLES if r in roles)


def add_operator(
    ledger: Ledger,
    name: str,
    role: str | list[str] | tuple[str, ...],
    password: str,
    *,
    os_account: str | None = None,
    notify_to: str | None = None,
) -> Operator:
    """Store an operator; the password is kept only as an argon2 hash. Who may add one, and the
    history of it, is `payflow.acts.operators.add_person`'s."""
    address = checked_address(notify_to)
    name = name.strip()
    if not name or len(name) > 64 or not name.isprintable():
        raise OperatorError("a name is 1 to 64 printable characters")
    roles = parse_roles(role)
    if len(password) < MIN_PASSWORD:
        raise OperatorError(f"a password has at least {MIN_PASSWORD} characters")
    account = (os_account or "").strip() or None
    with ledger.engine.begin() as conn:
        # "Mia" beside "mia" would be a second person to the approval rules' eyes.
        taken = [
            other
            for other in conn.scalars(select(ConsoleOperator.name))
            if person_key(other) == person_key(name)
        ]
        if taken:
            raise OperatorError(f"operator {taken[0]!r} already exists")
        if account is not None and conn.scalar(
            select(ConsoleOperator.name).where(ConsoleOperator.os_account == account)
        ):
            raise OperatorError(f"OS account {account!r} already belongs to another operator")
        conn.execute(
            insert(ConsoleOperator).values(
                name=name,
                role=",".join(roles),
                password_hash=_HASHER.hash(password),
                created_at=ledger.now(),
                os_account=account,
                notify_to=address,
            )
        )
    return Operator(name, roles, account, address)


def checked_address(given: str | None) -> str | None:
    """An operator's notification address as stored: a plain e-mail address, or None; an
    OperatorError for anything else (a URL would carry a mail server's password)."""
    address = (given or "").strip()
    if not address:
        return None
    if len(address) > 254 or not _ADDRESS.fullmatch(address):
        # Not echoed: a URL pasted here may hold a mail server's password.
        raise OperatorError("an operator's address is an e-mail address (name@domain), no URL")
    return address


def set_notify_to(ledger: Ledger, name: str, address: str | None) -> Operator:
    """Store (None: clear) where the operator `name` is told what needs them; who may, and the
    history of it, is `payflow.acts.operators.set_address`'s."""
    stored = checked_address(address)
    with ledger.engine.begin() as conn:
        moved = conn.execute(
            update(ConsoleOperator).where(ConsoleOperator.name == name).values(notify_to=stored)
        ).rowcount
    if not moved:
        raise OperatorError(f"no operator {name!r}")
    operator = operator_named(ledger, name)
    assert operator is not None
    return operator


def addresses_of(ledger: Ledger, role: str, *, besides: str | None = None) -> list[str]:
    """The notification addresses of every operator holding `role`, but `besides` (the maker,
    who may not check their own batch)."""
    with reader(ledger.engine).connect() as conn:
        rows = conn.execute(select(ConsoleOperator)).all()
    skip = person_key(besides) if besides else None
    return sorted(
        {
            row.notify_to
            for row in rows
            if row.notify_to and role in parse_roles(row.role) and person_key(row.name) != skip
        }
    )


def _operator(row: Any) -> Operator:
    return Operator(row.name, parse_roles(row.role), row.os_account, row.notify_to)


def check_password(ledger: Ledger, name: str, password: str) -> Operator | None:
    """The operator when the name and password match, else None (same work either way)."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(
            select(ConsoleOperator).where(ConsoleOperator.name == name.strip())
        ).first()
    try:
        _HASHER.verify(row.password_hash if row else _DUMMY_HASH, password)
    except (VerificationError, InvalidHashError):
        return None
    return _operator(row) if row else None


def operator_named(ledger: Ledger, name: str) -> Operator | None:
    """The operator of that exact name (a session's, a code's), or None."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(select(ConsoleOperator).where(ConsoleOperator.name == name)).first()
    return _operator(row) if row else None


def operator_of_account(ledger: Ledger, os_account: str) -> Operator | None:
    """The operator whose OS account is `os_account` (the owner of a dropped file), or None."""
    with reader(ledger.engine).connect() as conn:
        row = conn.execute(
            select(ConsoleOperator).where(ConsoleOperator.os_account == os_account)
        ).first()
    return _operator(row) if row else None


def operator_count(ledger: Ledger) -> int:
    """How many operators exist (0: the first-run message tells how to add one)."""
    with reader(ledger.engine).connect() as conn:
        return len(conn.execute(select(ConsoleOperator.name)).all())


def has_admin(ledger: Ledger) -> bool:
    """Whether any operator holds the admin role: from then on only a signed-in admin adds
    operators (a maker who could add one could make herself a checker)."""
    with reader(ledger.engine).connect() as conn:
        roles = conn.execute(select(ConsoleOperator.role)).scalars().all()
    return any("admin" in parse_roles(str(role)) for role in roles)
