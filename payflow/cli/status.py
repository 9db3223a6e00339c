"""`payflow status BATCH_ID`: counts per state and the rows not yet final, from the ledger.

With `--refresh` (the default when the batch's last change in the ledger is over a minute old)
the batch's CREATED and PROCESSING payouts are polled first, through the run's own poller (a
refund batch: its PENDING and MANUAL refunds and the orders of its COMPLETED ones, through the
refund run's), and what the service says is recorded forward only; the figures are read
afterwards. Without a batch id, the newest batches are listed with their rows per state.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import sys
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from datetime import datetime, timedelta
from typing import TYPE_CHECKING, Annotated, NoReturn

import typer

from payflow.acts.history import batch_history, history_json, history_text
from payflow.api.errors import PaymentsApiError
from payflow.approvals import (
    ApprovalStatus,
    Expired,
    Pending,
    PolicyError,
    Void,
    approval_status,
)
from payflow.approvals.standing import Standing, standing
from payflow.cli.app import app, fail
from payflow.cli.batch_kinds import require_payout_batch
from payflow.cli.ledger_checks import not_paid_lines, not_refunded_lines
from payflow.cli.setup import prepare
from payflow.ending import BatchEnd, batch_end
from payflow.ledger import (
    PAID_OUTCOMES,
    RERUNNABLE_STATES,
    Disposition,
    FindingState,
    Ledger,
    RowOutcome,
    RowState,
    utc_now,
)
from payflow.ledger.rejected import RejectedLine
from payflow.ledger.run_beats import batch_beats
from payflow.ledger.service_binding import sandbox_served
from payflow.ledger.states import UNFINISHED_STATES
from payflow.ledger.totals import WordDifference
from payflow.links.records import LinksBatchLine, status_label
from payflow.redact import printable
from payflow.runtime import (
    NO_REAL_MONEY_MOVED,
    ConfigurationError,
    api_endpoint,
    client_for,
    open_ledger,
)
from payflow.settings import Settings
from payflow.storage import storage_at
from payflow.wording import NOT_REFRESHED, api_trouble, counted, state_words, unsent_words

if TYPE_CHECKING:
    from payflow.api import AsyncPayoutsClient

STALE_AFTER = timedelta(minutes=1)
SHOWN_PENDING = 50
SHOWN_BATCHES = 10


# The client's name as text: the API client (httpx) loads only when a refresh asks the service.
Poll = Callable[["AsyncPayoutsClient"], Awaitable[object]]


def _wants_refresh(
    settings: Settings, last: datetime | None, unfinished: bool, refresh: bool | None
) -> bool:
    """--refresh/--no-refresh as given; by default, when something is not final and the
    batch's last change in the ledger is over a minute old."""
    if refresh is not None:
        return refresh
    if settings.uses_sandbox:
        return False  # a past run's embedded sandbox is gone: nobody to ask
    stale = last is not None and utc_now() - last > STALE_AFTER and unfinished
    if stale and not (settings.api_token and settings.api_token.get_secret_value()):
        # A maker's or checker's machine holds no API token (docs/multi-user.md): the ledger's
        # word, said so, rather than a refusal of a command that only reads.
        print(NOT_REFRESHED, file=sys.stderr)
        return False
    return stale


def _refresh(settings: Settings, poll: Poll) -> None:
    if settings.api_url is None:
        raise ConfigurationError(
            "--refresh needs PAYFLOW_API_URL: a past run's embedded sandbox is gone"
        )
    from payflow.connections import check_service_binding  # the API client's imports: here

    # Rows paid on the embedded sandbox, asked about at the API, would all read as missing.
    check_service_binding(settings, sandbox=False)
    with api_endpoint(settings) as endpoint:  # the configured service: api_url is set

        async def asked() -> None:
            async with client_for(endpoint, settings) as client:
                # Asked first, so a refused token or an unreachable API is one line: the polls
                # only log their failures, and the stale counts read as fresh.
                await client.get_balance()
                await poll(client)

        asyncio.run(asked())


def _refund_status(
    settings: Settings, ledger: Ledger, batch_id: str, *, refresh: bool | None, as_json: bool
) -> NoReturn:
    """A refund batch's rows per state and its refunds not final yet; exit 0 only when every
    row is COMPLETED (it read "batch ID" and nothing else, exit 0, beside a PENDING refund).

    Refreshed like a payout batch: a refund the service completed after the run stopped
    tracking read PENDING here, and its order not yet REFUND, until `payflow refund` ran
    again."""
    book = ledger.refunds
    try:
        following = bool(book.unfinished(batch_id) or book.awaiting_order_status(batch_id))
        if _wants_refresh(settings, book.last_change(batch_id), following, refresh):
            from payflow.refunds.track import refresh_refunds  # the API client's imports: here

            _refresh(settings, lambda client: refresh_refunds(client, ledger, batch_id))
        counts = book.summary(batch_id)
        open_refunds = book.unfinished(batch_id)
        sandbox = sandbox_served(ledger)
        header = ledger.batch_header(batch_id)
        source = header.source_name if header else "FILE"
        approval = standing(ledger, batch_id, f"`payflow refund {source} --yes` sends it")
    except PaymentsApiError as exc:
        fail(api_trouble(exc))
    finally:
        ledger.close()
    pending = [
        {"externalId": ref.external_id, "orderId": ref.order_id, "state": str(ref.state)}
        for ref in open_refunds
    ]
    if as_json:
        summary = {"batch_id": batch_id, "refunds": counts, "pending": pending, "sandbox": sandbox}
        if approval is not None:
            summary["approval"] = approval.as_json()
        typer.echo(json.dumps(summary))
    else:
        typer.echo(f"refund batch {batch_id}")
        _echo_states(counts)
        said = approval.line("refunded") if approval else None
        if said:
            typer.echo(printable(said))
        heading = f"not final yet ({len(pending)}); `payflow refund FILE` again follows them:"
        if approval is not None and approval.waiting:
            heading = f"not refunded yet ({len(pending)}), waiting for approval:"
        if pending and settings.uses_sandbox:
            from payflow.cli.past_sandbox import refunds_gone_heading  # reporting's imports

            gone = refunds_gone_heading(settings, batch_id)
            heading = f"not final yet ({len(pending)}): {gone}" if gone else heading
        _echo_not_final(
            heading,
            [f"  {ref['externalId']}  order {ref['orderId']}  {ref['state']}" for ref in pending],
        )
        # Only the open refunds were listed: a failed one read "FAILED 1", exit 1, with no row,
        # no why and no next step; `payflow refund` had listed them.
        not_refunded = not_refunded_lines(settings, batch_id)
        if not_refunded:
            typer.echo("not refunded:")
        for line in not_refunded:
            typer.echo(line)
        _echo_sandbox(sandbox)
    raise typer.Exit(0 if set(counts) == {"COMPLETED"} else 1)


def _links_status(ledger: Ledger, batch_id: str, *, as_json: bool) -> NoReturn:
    """A links batch's rows per payout state and where its approval stands (its claims and
    payouts in full: `payflow links report`); exit 0 only when every row is COMPLETED."""
    from payflow.links.store import LinkStore

    try:
        counts: dict[str, int] = {}
        for view in LinkStore(ledger.engine).rows(batch_id):
            counts[view.state.value] = counts.get(view.state.value, 0) + 1
        approval = standing(ledger, batch_id, f"`payflow links --reissue {batch_id}` writes them")
        sandbox = sandbox_served(ledger)
    finally:
        ledger.close()
    if as_json:
        summary: dict[str, object] = {"batch_id": batch_id, "statuses": counts, "sandbox": sandbox}
        if approval is not None:
            summary["approval"] = approval.as_json()
        typer.echo(json.dumps(summary))
    else:
        typer.echo(f"links batch {batch_id}")
        for state, count in sorted(counts.items()):
            typer.echo(f"  {status_label(state):<16} {count}")
        said = approval.line("paid", "no claim URL is written before") if approval else None
        if said:
            typer.echo(printable(said))
        typer.echo(f"`payflow links report {batch_id}` shows its claims and payouts")
        _echo_sandbox(sandbox)
    raise typer.Exit(0 if set(counts) == {RowState.COMPLETED.value} else 1)


def _echo_states(counts: dict[str, int], unsent: str | None = None) -> None:
    """Rows per state, each named as an operator says it (`wording.state_words`)."""
    for state, count in sorted(counts.items()):
        typer.echo(f"  {state_words(state, unsent):<16} {count}")


def _echo_sandbox(sandbox: bool | None) -> None:
    """The run's closing line on a ledger bound to the embedded sandbox, whose figures read
    like paid money (COMPLETED) and are not (None, unknown: no line)."""
    if sandbox:
        typer.echo(NO_REAL_MONEY_MOVED)


def _echo_not_final(heading: str, lines: list[str]) -> None:
    """The heading and the first SHOWN_PENDING lines of the rows not final (none: nothing)."""
    if not lines:
        return
    typer.echo(heading)
    for line in lines[:SHOWN_PENDING]:
        typer.echo(line)
    if len(lines) > SHOWN_PENDING:
        typer.echo(f"  ... and {len(lines) - SHOWN_PENDING} more (use --json for all)")


def _list_batches(settings: Settings, *, as_json: bool) -> None:
    """The newest batches with their rows per state, for an operator who needs a batch id."""
    from payflow.links.store import LinkStore  # the API client's imports, for this list only

    with open_ledger(settings) as ledger:
        total = ledger.batch_count()
        shown = [
            (header, ledger.batch_summary(header.batch_id))
            for header in ledger.newest_batches(SHOWN_BATCHES)
        ]
        # A refund batch's rows are refunds: counted from the refund book, and named so.
        refunds = {h.batch_id: ledger.refunds.summary(h.batch_id) for h, c in shown if not c}
        shown = [(h, c or refunds[h.batch_id]) for h, c in shown]
        # Kept apart (a links batch's rows are claims and the payouts recipients made): the
        # list never named one, and with none of the other kinds it gave no id to look at.
        link_batches = LinkStore(ledger.engine).newest_batches(SHOWN_BATCHES)
        # Refunds and links wait for approval with every row unsent, which their states alone
        # read as "to refund" and "links open".
        approvals = {
            batch_id: standing(ledger, batch_id)
            for batch_id in [*refunds, *(line.batch_id for line in link_batches)]
            if ledger.batch_exists(batch_id)
        }
        sandbox = sandbox_served(ledger)
        # A declined or expired batch read "3 VALIDATED", as if it were still to be paid.
        ends = {h.batch_id: _end_of(ledger, h.batch_id, None) for h, _ in shown}
    if as_json:
        batches = [
            {
                "batch_id": header.batch_id,
                "source_name": header.source_name,
                "sheet": header.sheet,
                "created_at": header.created_at.isoformat(),
                "made_by": header.made_by,
                "kind": "refunds" if header.batch_id in refunds else "payouts",
                "statuses": counts,
                "end_state": end.name if (end := ends[header.batch_id]) else None,
                **_approval_json(approvals.get(header.batch_id)),
            }
            for header, counts in shown
        ]
        links = [
            {
                "batch_id": line.batch_id,
                "source_name": line.source_name,
                "created_at": line.created_at.isoformat(),
                "statuses": line.counts,
                **_approval_json(approvals.get(line.batch_id)),
            }
            for line in link_batches
        ]
        summary = {"batches": batches, "total": total, "links_batches": links}
        typer.echo(json.dumps({**summary, "sandbox": sandbox}))
        return
    if not shown:
        where = settings.ledger_place
        typer.echo(f"no payout batch in the ledger {where} yet: `payflow run FILE` adds one")
        _echo_links_batches(link_batches, approvals)
        return
    typer.echo(f"batches in the ledger {settings.ledger_place}, newest first:")
    for header, counts in shown:
        states = ", ".join(f"{n} {state_words(state)}" for state, n in sorted(counts.items()))
        when = f"{header.created_at:%Y-%m-%d %H:%M} UTC"
        maker = f" by {header.made_by}" if header.made_by else ""
        line = f"  {header.batch_id}  {when}  {header.source}{maker}"
        kind = " (refunds)" if header.batch_id in refunds else ""
        end = ends[header.batch_id]
        ended = f"; {end.name}, never paid" if end and end.name != "stopped" else ""
        ended = f"; {end.name}" if end and end.name == "stopped" else ended
        ended += _approval_words(approvals.get(header.batch_id))
        typer.echo(
            printable(f"{line}  {counted(sum(counts.values()), 'row')}{kind}: {states}{ended}")
        )
    if total > len(shown):
        # It said "`payflow console` lists them all": the command line had no way to them.
        typer.echo(
            f"  ... and {total - len(shown)} older: `payflow batches --page 2` lists them "
            "(--since DATE, --file NAME, --maker NAME, --state STATE search them)"
        )
    typer.echo("`payflow status BATCH_ID` shows one batch and its rows not final yet")
    _echo_links_batches(link_batches, approvals)
    _echo_sandbox(sandbox)


def _approval_json(found: Standing | None) -> dict[str, object]:
    """The `approval` of a refund or links batch in the list's JSON (none: no key)."""
    return {"approval": found.as_json()} if found is not None else {}


def _approval_words(found: Standing | None) -> str:
    """`; waiting for approval by 1 person` or `; approved by bob` for a refund or links batch
    in the list (declined and expired too); nothing when the policy alone let it go."""
    if found is None:
        return ""
    if found.waiting:
        return f"; waiting for approval by {counted(found.steps_left, 'person')}"
    if found.state in ("Declined", "Expired"):
        return f"; {found.state.lower()}" + (
            f" by {found.declined_by}" if found.declined_by else ""
        )
    return f"; approved by {', '.join(found.approved_by)}" if found.approved_by else ""


def _echo_links_batches(
    lines: list[LinksBatchLine], approvals: dict[str, Standing | None] | None = None
) -> None:
    """The newest links batches, each with its file, rows per state and approval (none:
    nothing)."""
    if not lines:
        return
    typer.echo("links batches, newest first:")
    for line in lines:
        states = ", ".join(f"{n} {status_label(state)}" for state, n in sorted(line.counts.items()))
        when = f"{line.created_at:%Y-%m-%d %H:%M} UTC"
        rows = counted(sum(line.counts.values()), "row")
        approval = _approval_words((approvals or {}).get(line.batch_id))
        typer.echo(
            printable(f"  {line.batch_id}  {when}  {line.source_name}  {rows}: {states}{approval}")
        )
    typer.echo("`payflow links report BATCH_ID` shows one links batch, its claims and payouts")


def _approval_now(ledger: Ledger, batch_id: str) -> ApprovalStatus | None:
    """The batch's approval status, or None when the policy cannot be read (the run that pays
    it says so in one line). Read once: it reads the whole batch (seconds at 100,000 rows)."""
    try:
        return approval_status(ledger, batch_id)
    except PolicyError:
        return None


def _end_of(ledger: Ledger, batch_id: str, found: ApprovalStatus | None) -> BatchEnd | None:
    """The batch's end state (declined, expired, stopped), or None (or the policy unreadable)."""
    try:
        return batch_end(ledger, batch_id, found)
    except PolicyError:
        return None


def _steps_waiting(found: ApprovalStatus | None) -> tuple[int, bool]:
    """Approval steps the batch still waits for (0: none, or the policy cannot be read), and
    whether its approval expired."""
    steps = found.steps_left if isinstance(found, Pending | Void) else 0
    return steps, isinstance(found, Expired)


SHOWN_REJECTS = 10


@dataclass(frozen=True)
class OwnAndEarlier:
    """What this batch sent itself, beside its rows whose payout an earlier batch made (a file
    run again): "8 rows: 8 COMPLETED" read as if this run had paid them."""

    sent: int  # its own payouts sent or being sent
    earlier: int  # rows whose payout another batch registered (same externalId and content)
    already_paid: int  # of those, COMPLETED

    def line(self) -> str:
        """`sent by this run: 0; already paid: 8 (by an earlier batch: never sent again)`."""
        others = self.earlier - self.already_paid
        rest = f"; sent by an earlier batch, not paid yet: {others}" if others else ""
        return (
            f"sent by this run: {self.sent}; already paid: {self.already_paid}{rest} (same "
            "externalId as an earlier batch: never sent again)"
        )


def _own_and_earlier(ledger: Ledger, batch_id: str) -> OwnAndEarlier:
    earlier = ledger.states_of(batch_id, Disposition.ALREADY_KNOWN)
    paid = earlier.get(RowState.COMPLETED, 0)
    return OwnAndEarlier(ledger.batch_counts(batch_id).own_sent, sum(earlier.values()), paid)


def _echo_rejected(
    settings: Settings, batch_id: str, total: int, shown: list[RejectedLine]
) -> None:
    """The rows rejected in the file, each with its problems, and the rejects report: a
    deployed run's batch read "REJECTED 1" and nothing said which row or why."""
    if not total:
        return
    # Here, not at the top: report_files loads openpyxl and, through payflow.intake, pandas
    # (about 0.5 s of CPU), which every other `payflow status` line does without.
    from payflow.intake.report_files import rejects_names

    typer.echo(
        f"rejected in the file, never sent ({counted(total, 'row')}): fix them in the file and "
        "run it again (rows already sent are not paid twice)"
    )
    for line in shown:
        why = "; ".join(line.reasons) or "no reason recorded"
        typer.echo(printable(f"  row {line.row_number:>6}  {line.external_id or '-'}  {why}"))
    if total > len(shown):
        typer.echo(f"  ... and {total - len(shown)} more")
    reports = storage_at(settings.reports_location())
    name = rejects_names(batch_id)[0]
    with contextlib.suppress(OSError):  # storage out of reach: the rows above still say it
        if reports.exists(name):
            typer.echo(printable(f"  every rejected row: {reports.place(name)}"))


def _echo_conflicts(total: int, shown: list[RejectedLine]) -> None:
    """The rows refused as a known externalId with other content, each naming the externalId
    and the columns that differ: "CONFLICT 1" said neither."""
    if not total:
        return
    typer.echo(f"a known externalId with other content, never sent ({counted(total, 'row')}):")
    for line in shown:
        typer.echo(printable(f"  row {line.row_number:>6}  {'; '.join(line.reasons)}"))
    if total > len(shown):
        typer.echo(f"  ... and {total - len(shown)} more in the report")


def _run_alive(settings: Settings, ledger: Ledger, batch_id: str) -> str | None:
    """The label of a pay run of the batch alive now (its heartbeat in the ledger): a deployed
    run paused for the batch's approval beats while it waits."""
    now = ledger.now()
    window = settings.run_stale_window
    return next((b.label for b in batch_beats(ledger, batch_id) if b.alive(now, window)), None)


def _how_to_go_on(
    settings: Settings, batch_id: str, waiting: int = 0, waiting_run: str | None = None
) -> str:
    """What sends a batch's rows left unsent by a stopped run: `payflow pay`, which refuses a
    batch whose payouts went to a past run's embedded sandbox (it said to run it all the same),
    and a batch still waiting for approval (it said to pay it, and the pay refused). A batch
    whose pay run waits for the approval (`waiting_run`) is paid by that run once approved."""
    from payflow.cli.past_sandbox import stranded  # reporting's imports, for this line only

    lead = "rows not sent (VALIDATED) or left being sent (SUBMITTING): "
    if waiting and waiting_run:
        # It said "then `payflow pay`" while `payflow approve` resumes this run, which pays.
        people = "1 person" if waiting == 1 else f"{waiting} people"
        return printable(
            f"{lead}the batch is waiting for approval by {people}, never its maker: `payflow "
            f"approve {batch_id}` resumes the pay run waiting for it ({waiting_run}), which then "
            "sends each once"
        )
    if waiting:
        people = "1 person" if waiting == 1 else f"{waiting} people"
        return (
            f"{lead}the batch is waiting for approval by {people}, never its maker: `payflow "
            f"approve {batch_id}`, then `payflow pay {batch_id}` sends each once"
        )
    if gone := stranded(settings, batch_id):
        return (
            f"{lead}{counted(gone, 'row')} went to a past run's embedded sandbox, which ended "
            "with that run, so no run can resume the batch; to pay the file on the sandbox, run "
            "it with a fresh ledger (another PAYFLOW_HOME)"
        )
    return (
        f"{lead}unless a run pays the batch now, `payflow pay {batch_id}` sends each once (a "
        "SUBMITTING row is looked up at the service first)"
    )


@app.command()
def status(
    batch_id: Annotated[
        str | None,
        typer.Argument(help="Batch id printed by `payflow run`; none: list the newest batches."),
    ] = None,
    refresh: Annotated[
        bool | None,
        typer.Option(
            "--refresh/--no-refresh",
            help="Ask the API for the batch's payouts (or refunds) not final yet before showing "
            "them (default: when the ledger has had no change for the batch for over a minute).",
            show_default=False,
        ),
    ] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print JSON on stdout only.")] = False,
    show_history: Annotated[
        bool,
        typer.Option(
            "--history",
            help="Also show the batch's history: who registered, submitted, approved, paid, "
            "reran, stopped, reconciled it and acknowledged its findings, and where (the "
            "console's batch page shows the same).",
        ),
    ] = False,
) -> None:
    """Show how many rows of a batch stand in each state, and which are not final yet."""
    settings = prepare()
    if batch_id is None:
        _list_batches(settings, as_json=as_json)
        raise typer.Exit(0)
    ledger = open_ledger(settings)
    if ledger.refunds.batch_exists(batch_id):
        _refund_status(settings, ledger, batch_id, refresh=refresh, as_json=as_json)
    from payflow.links.store import LinkStore  # the API client's imports, for links only

    if LinkStore(ledger.engine).batch_exists(batch_id):
        _links_status(ledger, batch_id, as_json=as_json)
    # HELD rows wait for an operator's --allow-repeat: not final either.
    waits = UNFINISHED_STATES | {RowState.HELD}
    try:
        require_payout_batch(settings, ledger, batch_id)
        unfinished_now = ledger.has_unfinished(batch_id)
        if _wants_refresh(settings, ledger.last_change(batch_id), unfinished_now, refresh):
            # Asked for: the final rows inside the correction window too (the platform may
            # reverse a COMPLETED payout with no webhook); by default only the open ones.
            window = timedelta(days=settings.reconcile_recent_days) if refresh else None
            _refresh(settings, lambda client: _refresh_batch(client, ledger, batch_id, window))
        counts = ledger.batch_summary(batch_id)
        words = ledger.word_differences(batch_id, SHOWN_PENDING)
        outcomes = ledger.latest_outcomes(batch_id)
        findings_open = [f for f in ledger.findings(batch_id) if f.state == FindingState.OPEN]
        reruns = ledger.rerun_batches(batch_id)
        # A rerun row is done or not by its latest attempt, as the report counts it, also when
        # the rerun was made from another batch (an edited file run again shares its rows):
        # such a batch read FAILED for a row a rerun had paid.
        latest = ledger.latest_summary(batch_id)
        pending = [
            {"row": row, "externalId": external_id, "state": str(state)}
            for row, external_id, state in ledger.rows_in_states(batch_id, waits)
        ]
        decline = next((r for r in ledger.approvals_of(batch_id) if r.decision == "decline"), None)
        # Rows not sent yet (VALIDATED, or SUBMITTING left by a stopped run) are what an
        # approval decides; with none, neither the end nor the steps waiting ask for it.
        not_sent = counts.get(RowState.VALIDATED.value) or counts.get(RowState.SUBMITTING.value)
        found = _approval_now(ledger, batch_id) if not_sent else None
        end = _end_of(ledger, batch_id, found)
        sandbox = sandbox_served(ledger)
        waiting, expired = _steps_waiting(found) if counts.get("VALIDATED") else (0, False)
        own = _own_and_earlier(ledger, batch_id)
        history = batch_history(ledger, batch_id) if show_history else []
        waiting_run = _run_alive(settings, ledger, batch_id) if waiting else None
        rejected = (
            ledger.rejected_rows(batch_id, SHOWN_REJECTS)
            if counts.get(RowState.REJECTED.value)
            else (0, [])
        )
        conflicts = (
            ledger.conflict_rows(batch_id, SHOWN_REJECTS)
            if counts.get(RowState.CONFLICT.value)
            else (0, [])
        )
    except PaymentsApiError as exc:
        fail(api_trouble(exc))
    finally:
        ledger.close()
    if as_json:
        summary: dict[str, object] = {
            "batch_id": batch_id,
            "statuses": counts,
            "pending": pending,
            "sandbox": sandbox,
        }
        if decline is not None:
            summary["declined_by"] = decline.approver
        if end is not None:
            summary["end_state"] = {"state": end.name, "said": end.said, "next": end.next_step}
        if reruns or latest != counts:
            summary.update(rerun_batches=reruns, latest_statuses=latest)
        if words:
            summary.update(outcomes=outcomes, service_word=[_word_json(w) for w in words])
        if findings_open:
            summary["open_findings"] = len(findings_open)
        if own.earlier:
            summary.update(sent_by_this_batch=own.sent, already_paid=own.already_paid)
        if show_history:
            summary["history"] = [history_json(line) for line in history]
        typer.echo(json.dumps(summary))
    else:
        typer.echo(f"batch {batch_id}")
        unsent = unsent_words(
            declined_by=decline.approver if decline else None, waiting=waiting > 0, expired=expired
        )
        _echo_states(counts, unsent)
        if own.earlier:
            typer.echo(own.line())
        _echo_rejected(settings, batch_id, *rejected)
        _echo_conflicts(*conflicts)
        if reruns:
            typer.echo(f"rerun in {counted(len(reruns), 'batch')}; rows by latest attempt:")
            _echo_states(latest)
        elif latest != counts:
            typer.echo("rows rerun from another batch; rows by latest attempt:")
            _echo_states(latest)
        _echo_service_word(words, outcomes)
        if findings_open:
            typer.echo(
                f"open findings: {len(findings_open)}; `payflow findings {batch_id}` lists them"
            )
        if decline is not None:
            # Its rows stay VALIDATED for good: "not final yet" read as if they would still go.
            note = f" ({decline.note})" if decline.note else ""
            typer.echo(printable(f"declined by {decline.approver}{note}: nothing will be paid"))
            if end is not None:
                typer.echo(printable(f"next: {end.next_step}"))
        else:
            _echo_not_final(
                f"not final yet ({len(pending)}):",
                [
                    f"  row {r['row']:>6}  {r['externalId']}  {state_words(str(r['state']))}"
                    for r in pending
                ],
            )
            if counts.get(RowState.HELD.value):
                # A deployed run's batch showed "HELD 1" and nothing said how to pay it.
                typer.echo(
                    f"held rows repeat a recent payout: `payflow pay {batch_id} --allow-repeat` "
                    "pays them once another person approves"
                )
            if {RowState.VALIDATED.value, RowState.SUBMITTING.value} & {
                str(r["state"]) for r in pending
            }:
                # A run stopped by a signal (or a crash) left them; nothing said how to go on.
                # An expired batch read "`payflow pay` sends each once", and pay refused it.
                said = end.line() if end is not None else None
                typer.echo(
                    printable(said)
                    if said
                    else _how_to_go_on(settings, batch_id, waiting, waiting_run)
                )
            if set(latest) & {state.value for state in RERUNNABLE_STATES}:
                # The run listed its unpaid rows with their statusMessage; the operator back
                # the next day read "FAILED 1", exit 1, with no why and no next step.
                for line in not_paid_lines(settings, batch_id):
                    typer.echo(printable(line))
        if show_history:
            typer.echo("history:" if history else "history: nothing recorded yet")
            for act in history:
                typer.echo(printable(f"  {history_text(act)}"))
        _echo_sandbox(sandbox)
    raise typer.Exit(1 if pending or not _all_paid(latest, outcomes) else 0)


def _all_paid(latest: dict[str, int], outcomes: dict[str, int]) -> bool:
    """Every row paid by the service's word (a row the platform reversed is not; one it paid
    after a failure is), a duplicate by its payout's latest state."""
    paid = {o.value for o in PAID_OUTCOMES} | {RowOutcome.DUPLICATE.value}
    if set(outcomes) - paid:
        return False
    # A duplicate of a failed payout reads FAILED by its latest state; a row paid after a
    # failure reads FAILED there too, and paid by the service's word.
    return not (set(latest) - {RowState.COMPLETED.value}) or (
        RowOutcome.PAID_CORRECTED.value in outcomes
    )


async def _refresh_batch(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str, window: timedelta | None
) -> None:
    from payflow.paying import recheck_final, refresh_batch  # the API client's imports: here

    await refresh_batch(client, ledger, batch_id)
    if window is not None:
        await recheck_final(client, ledger, batch_id, utc_now() - window)


def _word_json(word: WordDifference) -> dict[str, object]:
    return {
        "row": word.row_number,
        "externalId": word.external_id,
        "ledger": word.state,
        "service": word.service_status,
        "outcome": word.outcome.value,
        "learned_by": word.source,
        "at": word.at.isoformat(),
    }


def _echo_service_word(words: list[WordDifference], outcomes: dict[str, int]) -> None:
    """The rows whose service's latest word differs from the ledger's state, and the rows by
    outcome, which follows the service (none differs: nothing)."""
    if not words:
        return
    typer.echo("the service's latest word differs from the ledger for these rows:")
    for w in words:
        heard = f"{w.source or 'reconcile'} {w.at:%Y-%m-%d %H:%M} UTC"
        typer.echo(
            printable(
                f"  row {w.row_number:>6}  {w.external_id}  ledger {w.state}, service "
                f"{w.service_status} ({heard}): {w.outcome.value}"
            )
        )
    typer.echo("rows by outcome (the service's word first):")
    _echo_states(outcomes)
