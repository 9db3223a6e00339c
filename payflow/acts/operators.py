"""Adding an operator: the first one of a ledger is an admin, and from then on only a signed-in
admin adds people. Before, anyone who could write the ledger added a checker of their own and
approved their own batch."""

from __future__ import annotations

from payflow.acts.actor import Actor, NotAllowed
from payflow.console.operators import (
    Operator,
    add_operator,
    has_admin,
    parse_roles,
    set_notify_to,
)
from payflow.ledger import Ledger
from payflow.ledger.actions import record_action

ADDED = "operator_added"
FIRST_IS_ADMIN = (
    "this ledger has no admin yet: its first operator is an admin "
    "(payflow console add-user NAME --role admin), who then signs in "
    "(payflow login NAME) and adds the others"
)


def first_must_be_admin(ledger: Ledger) -> bool:
    """True while the ledger has no admin: the next operator added must be one."""
    return not has_admin(ledger)


def may_add(ledger: Ledger, admin: Actor | None, roles: tuple[str, ...]) -> None:
    """NotAllowed unless `admin` may add an operator with `roles` now (asked before a password
    is typed, and again as it is stored)."""
    if first_must_be_admin(ledger):
        if "admin" not in roles:
            raise NotAllowed(FIRST_IS_ADMIN)
    elif admin is None:
        raise NotAllowed(
            "not signed in: only a signed-in admin adds operators (payflow login NAME)"
        )
    else:
        admin.require("admin", "adds operators")


def add_person(
    ledger: Ledger,
    admin: Actor | None,
    name: str,
    roles: str | list[str] | tuple[str, ...],
    password: str,
    *,
    os_account: str | None = None,
    notify_to: str | None = None,
) -> Operator:
    """Add an operator as `admin` (None: nobody signed in, allowed only for a ledger's first
    admin). NotAllowed otherwise; OperatorError for a bad name, role or password."""
    wanted = parse_roles(roles)
    may_add(ledger, admin, wanted)
    operator = add_operator(
        ledger, name, wanted, password, os_account=os_account, notify_to=notify_to
    )
    by = admin.name if admin is not None else operator.name
    record_action(ledger, by, ADDED, detail=f"{operator.name}, roles {operator.role}")
    return operator


def set_address(ledger: Ledger, admin: Actor | None, name: str, address: str | None) -> Operator:
    """A signed-in admin sets (None or "": clears) where operator `name` is told what needs
    them; NotAllowed for anyone else, OperatorError for an address that is no e-mail address."""
    if admin is None:
        raise NotAllowed("not signed in: only a signed-in admin sets operators' addresses")
    admin.require("admin", "sets operators' addresses")
    operator = set_notify_to(ledger, name, address)
    said = operator.notify_to or "none"
    record_action(ledger, admin.name, "operator_notify_set", detail=f"{name}: {said}")
    return operator
