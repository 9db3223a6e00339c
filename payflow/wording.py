"""The sentences an operator reads that more than one command says: counts ("1 row", "3 rows")
and the lines for a payments API that refused the token or could not be asked."""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from payflow.api.errors import PaymentsApiError

TOKEN_REFUSED = "the payments API refused the token (check PAYFLOW_API_TOKEN)"
# What a run stopped by the API did: each row's state is in the ledger, and a run resumes it.
RUN_AGAIN_TO_RESUME = "nothing more was sent; every row is in the ledger, run again to resume"


# How soon the scheduled reconciliation re-fetches a batch's payouts (prefect.yaml's
# reconcile-pending runs every 30 minutes and takes batches with payouts not yet re-checked).
RECHECKED_WITHIN = "30 minutes"


def not_rechecked_line(n: int, batch_id: str, *, embedded: bool = False) -> str:
    """The pay run's word on its figures: read from the ledger (webhooks and polls), `n` payouts
    not yet re-fetched, and when that happens (never, on the `embedded` sandbox, gone with its
    run)."""
    if embedded:
        return (
            f"{counted(n, 'payout')} not re-checked against the service: the embedded sandbox "
            "ends with this run, so no reconciliation can ask it again"
        )
    return (
        f"{counted(n, 'payout')} not yet re-checked against the service: the scheduled "
        f"reconciliation re-fetches them within {RECHECKED_WITHIN} (reconcile-pending), then "
        "daily through the correction window (reconcile-recent); "
        f"`payflow reconcile {batch_id}` does it now"
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
