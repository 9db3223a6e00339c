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


def claims_not_written(folder: object, why: str, command: str) -> str:
    """The one line of a links command that could not write its claims file: nothing was
    issued, and the command that issues them once there is room."""
    from payflow.redact import printable

    return (
        f"claims not written to {printable(str(folder))}: {why}; none was issued, issue them "
        f"with `{command}` (DIR: a folder it can be written to)"
    )


# How soon the scheduled reconciliation re-fetches a batch's payouts (prefect.yaml's
# reconcile-pending runs every 30 minutes and takes batches with payouts not yet re-checked).
RECHECKED_WITHIN = "30 minutes"


def not_rechecked_line(
    n: int, batch_id: str, *, embedded: bool = False, console: bool = False
) -> str:
    """The word on a batch's figures: read from the ledger (webhooks and polls), `n` payouts not
    yet re-fetched, and when that happens: never on a run's `embedded` sandbox (gone with its
    run); on the `console`'s page, by its "Reconcile now" (its own sandbox lives while it runs)."""
    if embedded and console:
        return (
            f"{counted(n, 'payout')} not yet re-checked against the service: no scheduled "
            "reconciliation reaches this console's embedded sandbox; “Reconcile now” on this "
            "page re-fetches them while the console runs"
        )
    if embedded:
        return (
            f"{counted(n, 'payout')} not re-checked against the service: the embedded sandbox "
            "ends with this run, so no reconciliation can ask it again"
        )
    now = (
        "“Reconcile now” on this page does it now"
        if console
        else f"`payflow reconcile {batch_id}` does it now"
    )
    return (
        f"{counted(n, 'payout')} not yet re-checked against the service: the scheduled "
        f"reconciliation re-fetches them within {RECHECKED_WITHIN} (reconcile-pending), then "
        f"daily through the correction window (reconcile-recent); {now}"
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


# What an operator calls the ledger's own row states (the service's statuses, COMPLETED,
# FAILED..., read as the service's documents name them). VALIDATED is said by why the row is not
# sent: `unsent_words` gives the batch's reason when it has one.
LEDGER_STATE_WORDS = {
    "VALIDATED": "not sent yet",
    "SUBMITTING": "being sent",
    "HELD": "held as a repeat",
    "REJECTED": "rejected in the file",
    "CONFLICT": "externalId conflict",
    "SUBMIT_REJECTED": "refused by the service",
}
WAITING_FOR_APPROVAL = "waiting for approval"
APPROVAL_EXPIRED = "approval expired"


def unsent_words(
    *, declined_by: str | None = None, waiting: bool = False, expired: bool = False
) -> str | None:
    """Why a batch's rows are not sent, in an operator's words ("declined by ana", "approval
    expired", "waiting for approval"); None when it gives no reason (not submitted, stopped)."""
    if declined_by:
        return f"declined by {declined_by}"
    if expired:
        return APPROVAL_EXPIRED
    return WAITING_FOR_APPROVAL if waiting else None


def state_words(state: str, unsent: str | None = None) -> str:
    """A row state as an operator reads it: "not sent yet" (or `unsent`, the batch's reason)
    for VALIDATED, "being sent" for SUBMITTING...; a service status as the service names it."""
    if state == "VALIDATED" and unsent:
        return unsent
    return LEDGER_STATE_WORDS.get(state, state)
