"""The sentences an operator reads that more than one command says: counts ("1 row", "3 rows")
and the lines for a payments API that refused the token or could not be asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from payflow.api.errors import PaymentsApiError

TOKEN_REFUSED = "the payments API refused the token (check PAYFLOW_API_TOKEN)"
# What a run stopped by the API did: each row's state is in the ledger, and a run resumes it.
RUN_AGAIN_TO_RESUME = "nothing more was sent; every row is in the ledger, run again to resume"


def report_not_written(folder: object, why: str, command: str) -> str:
    """The one line of a command that finished (money may have moved) but could not write its
    report: where, why, and the command that writes it once there is room."""
    from payflow.redact import printable

    return (
        f"report not written to {printable(str(folder))}: {why}; write it with `{command}` "
        "(DIR: a folder it can be written to)"
    )


def plural(n: int, noun: str) -> str:
    """`noun` as it goes with `n`: "row" for 1, "rows" otherwise ("batch", "batches"; "people")."""
    if n == 1:
        return noun
    if noun == "person":
        return "people"
    return f"{noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{noun}s"


def counted(n: int, noun: str) -> str:
    """`n` and the noun that goes with it: "1 row", "0 rows", "12 rows"."""
    return f"{n} {plural(n, noun)}"


def api_trouble(exc: PaymentsApiError, *, then: str = "", sandbox: bool = False) -> str:
    """One line for a payments API (or, `sandbox`, the embedded sandbox) that refused the token
    or could not be asked, then `then`: what the command did or did not do about it.

    The settings are named, never their values: the URL may hold credentials and the token is a
    secret. The client's error text holds neither (a service's words are masked where read)."""
    # Imported here: a command that never meets the API does not pay for httpx.
    from payflow.api.errors import AuthError

    if isinstance(exc, AuthError) and not sandbox:
        line = TOKEN_REFUSED
    elif sandbox:
        line = f"the embedded sandbox could not be asked: {exc}"
    else:
        line = f"the payments API could not be asked (PAYFLOW_API_URL): {exc}"
    return f"{line}; {then}" if then else line


# `payflow status` on a maker's or checker's machine, which holds no API token: it reads only.
NOT_REFRESHED = (
    "payflow: not asked of the API (no PAYFLOW_API_TOKEN here): the ledger's states as the "
    "paying side last recorded them"
)
