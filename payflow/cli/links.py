"""`payflow links FILE`, `payflow links --reissue BATCH_ID`, `payflow links report BATCH_ID`
and `payflow links serve --port N`: payout links in bulk, and the address that answers them.
"""

from __future__ import annotations

import json
import signal
import sys
from contextlib import ExitStack, nullcontext
from pathlib import Path
from types import FrameType
from typing import TYPE_CHECKING, Annotated, Any

import typer
import uvicorn
from typer.core import TyperGroup

from payflow.acts.context import acting_as
from payflow.api.errors import AuthError, PaymentsApiError
from payflow.cli.app import app, fail
from payflow.cli.batch_kinds import require_batch
from payflow.cli.exposure import CertFile, ForwardedAllowIps, Host, KeyFile, checked_exposure
from payflow.cli.ledger_checks import check_ledger
from payflow.cli.setup import (
    check_bound_service,
    listening_socket,
    prepare,
    readable_file,
    writable_folder,
)
from payflow.intake import BatchFileError
from payflow.links.records import status_label
from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.runtime import NO_REAL_MONEY, api_endpoint, api_token, open_ledger
from payflow.settings import Settings
from payflow.wording import api_trouble, counted

if TYPE_CHECKING:
    from payflow.acts.actor import Actor
    from payflow.flows.links import Action, LinksResult

EXIT_OK, EXIT_SOME_REJECTED, EXIT_NOT_ALL_PAID = 0, 1, 1
SHOWN_PROBLEMS = 10


class _IssueByDefault(TyperGroup):
    """`payflow links FILE` and `payflow links --reissue ID` mean `payflow links issue ...`."""

    def parse_args(self, ctx: Any, args: list[str]) -> list[str]:
        if args and args[0] not in self.commands and args[0] not in ("--help", "-h"):
            args = ["issue", *args]
        return super().parse_args(ctx, args)


links_app = typer.Typer(
    cls=_IssueByDefault,
    no_args_is_help=True,
    help="Payout links: claim URLs for recipients who enter their own bank details.",
)
app.add_typer(links_app, name="links")


def _run_flow(
    settings: Settings, source: str, action: Action, out: Path | None, sheet: str | None
) -> LinksResult:
    prefect = TemporaryPrefect.for_settings(settings)  # boots while Prefect is imported below
    from payflow.flows.links import payout_links  # Prefect loads only for the commands that need it

    try:
        # As every command that runs a flow: a slow start waits the setting's time, then says so
        # in one line (it ended "unexpected error (RuntimeError)" under load).
        prefect.ready()
        with prefect.flow_settings():
            if action == "issue":  # the API only for a serviceId: the flow asks it then
                return payout_links(
                    source=source, action=action, out_dir=str(out) if out else None, sheet=sheet
                )
            # Chosen once, before the flow, as `payflow run` does: the flow only uses it.
            with api_endpoint(settings) as endpoint:
                return payout_links(
                    source=source,
                    action=action,
                    out_dir=str(out) if out else None,
                    api_url=endpoint.base_url,
                    sandbox=endpoint.is_sandbox,
                )
    except (BatchFileError, PrefectServerNotStarted) as exc:
        fail(str(exc))
    except PaymentsApiError as exc:
        fail(api_trouble(exc, then="run again later", sandbox=settings.uses_sandbox))


def _require_links_batch(settings: Settings, batch_id: str) -> None:
    """Open (and migrate) the ledger and stop in one line unless it holds the links batch: an
    unknown id started the embedded sandbox and a flow before the flow said so."""
    with open_ledger(settings) as ledger:
        require_batch(settings, ledger, batch_id, "links")


def _print(result: LinksResult, as_json: bool, *, sandbox: bool) -> None:
    summary: dict[str, Any] = {
        "batch_id": result.batch_id,
        "action": result.action,
        "rows": result.rows,
        "rejected": result.rejected,
        "already_known": result.already_known,
        "known": result.known,
        "notices": result.notices,
        "claims_issued": result.claims_issued,
        "claims_file": result.claims_file,
        "claims": result.figures.claims,
        "statuses": result.figures.statuses,
        "not_paid": result.figures.unpaid,
        "report": result.report_xlsx or None,
        "sandbox": sandbox,
    }
    if result.report_error:
        summary["report_error"] = result.report_error
    if result.claims_error:
        summary["claims_error"] = result.claims_error
    if result.not_issued:
        summary.update(
            not_issued=result.not_issued, waiting_for_approvals=result.waiting_for_approvals
        )
    unconfirmed = list(result.refreshed.unconfirmed) if result.refreshed else []
    if unconfirmed:
        summary["unconfirmed"] = unconfirmed
    if as_json:
        print(json.dumps(summary))
        return
    print(f"links batch {result.batch_id} ({result.action})")
    for notice in result.notices:
        print(f"  warning: {notice}")
    if result.action == "issue":
        print(f"  rows {result.rows}, rejected {result.rejected}, known {result.already_known}")
    else:
        if result.figures.rejected:
            rejected = counted(result.figures.rejected, "row")
            print(f"  rejected in the file: {rejected} (listed in the report)")
        if result.figures.known:
            known = counted(result.figures.known, "row")
            print(f"  known from an earlier links batch: {known} (its batch in the report)")
    for line in result.problems[:SHOWN_PROBLEMS]:
        print(f"  rejected: {line}")
    if len(result.problems) > SHOWN_PROBLEMS:
        print(f"  ... {len(result.problems) - SHOWN_PROBLEMS} more problems in the report")
    for line in result.known[:SHOWN_PROBLEMS]:
        print(f"  known: {line}")
    if len(result.known) > SHOWN_PROBLEMS:
        print(f"  ... and {len(result.known) - SHOWN_PROBLEMS} more known rows")
    for state, count in sorted(result.figures.claims.items()):
        print(f"  {state:<16} {count}")
    if result.action != "issue":  # a new batch has no payouts yet: its claims say it all
        print("  payouts:")
        for state, count in sorted(result.figures.statuses.items()):
            print(f"    {status_label(state):<14} {count}")
        for line in result.figures.unpaid[:SHOWN_PROBLEMS]:
            print(f"  not paid: {line}")
        if len(result.figures.unpaid) > SHOWN_PROBLEMS:
            print(f"  ... and {len(result.figures.unpaid) - SHOWN_PROBLEMS} more in the report")
    for line in unconfirmed_lines(unconfirmed, sandbox=sandbox):
        print(line)
    if result.not_issued:
        print(f"claims: none issued: {result.not_issued}")
    elif result.claims_error:
        print(result.claims_error)
    elif result.claims_file:
        issued = counted(result.claims_issued, "claim URL")
        print(f"claims: {issued} in {result.claims_file} (owner-only)")
        print("        send each recipient only their own line; never log or share this file")
    elif result.action == "reissue":
        # Silence read as a reissue that wrote its file somewhere the operator did not look.
        print("claims: none reissued: no unused claim of this batch has expired")
    if result.report_error:
        print(result.report_error)
    else:
        print(f"report: {result.report_xlsx}")
        print(f"        {result.report_csv}")


@links_app.command("issue")
def issue_command(
    file: Annotated[
        Path | None,
        typer.Argument(help="Links file: externalId, userId, amount[, serviceId].", readable=False),
    ] = None,
    reissue: Annotated[
        str | None,
        typer.Option(
            "--reissue",
            help="Claims for this batch's rows with none live: expired and unused, or not "
            "issued while it waited for approval.",
        ),
    ] = None,
    out: Annotated[Path | None, typer.Option("--out", help="Folder for claims and report.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
    sheet: Annotated[str | None, typer.Option("--sheet", help="XLSX sheet to read.")] = None,
) -> None:
    """Register a links file and write its claim URLs (or reissue expired ones).

    Over the approval policy's limits no claim URL is written: a checker approves the batch with
    `payflow approve BATCH`, then `--reissue BATCH` writes them."""
    settings = prepare()
    if (file is None) == (reissue is None):
        fail("give a links FILE or --reissue BATCH_ID (one of them)")
    if file is not None:
        readable_file(file)
    writable_folder(out)
    maker = None
    if reissue is not None:
        _require_links_batch(settings, reissue)
    else:
        check_ledger(settings)
        maker = _links_maker(settings)
    if settings.uses_sandbox:
        # Also for a new file: its claims lead to the sandbox's widget, and real recipients
        # must not be sent them.
        print(NO_REAL_MONEY, file=sys.stderr)
    action: Action = "issue" if file else "reissue"
    with acting_as(maker) if maker else nullcontext():
        result = _run_flow(settings, str(file) if file else str(reissue), action, out, sheet)
    _print(result, as_json, sandbox=settings.uses_sandbox)
    if result.not_issued:
        # Nothing to send a recipient yet: a maker reading exit 0 took the batch as done.
        raise typer.Exit(EXIT_NOT_ALL_PAID)
    # A claims file or report not written (a full disk) is exit 1, never 2: the ledger holds the
    # batch, and the line printed names the command that writes what is missing.
    unwritten = result.report_error or result.claims_error
    raise typer.Exit(EXIT_SOME_REJECTED if result.rejected or unwritten else EXIT_OK)


def _links_maker(settings: Settings) -> Actor:
    """Who registers the links: the signed-in maker, whom the two-person rule keeps from
    approving them (the embedded sandbox alone takes PAYFLOW_USER, where no money moves)."""
    from payflow.cli.signin import acting

    with open_ledger(settings) as ledger:
        return acting(settings, ledger, "maker", "registers payout links", binds_sandbox=True)


@links_app.command("report")
def report_command(
    batch_id: Annotated[str, typer.Argument(help="The links batch id.")],
    out: Annotated[Path | None, typer.Option("--out", help="Folder for the report.")] = None,
    as_json: Annotated[bool, typer.Option("--json", help="Print a JSON summary only.")] = False,
) -> None:
    """Look the batch's payouts up by externalId, then report claims used and expired."""
    settings = prepare()
    writable_folder(out)
    _require_links_batch(settings, batch_id)
    if settings.uses_sandbox:
        print(NO_REAL_MONEY, file=sys.stderr)
    from payflow.connections import check_service_binding  # the API client's imports: here

    # Read where the payouts were made: an API's payouts are unknown to a new embedded sandbox.
    check_service_binding(settings, sandbox=settings.uses_sandbox)
    result = _run_flow(settings, batch_id, "report", out, None)
    _print(result, as_json, sandbox=settings.uses_sandbox)
    # Done only when every recipient was paid: a used claim may still be a failed payout, and a
    # payout the service could not confirm is not known to be paid.
    confirmed = not (result.refreshed and result.refreshed.unconfirmed)
    done = result.figures.all_paid and confirmed and not result.report_error
    raise typer.Exit(EXIT_OK if done else EXIT_NOT_ALL_PAID)


def unconfirmed_lines(unconfirmed: list[str], *, sandbox: bool) -> list[str]:
    """Payouts the ledger holds as made that the service answered 404 for: on the embedded
    sandbox, the sandbox of the run that made them is gone; on an API, a finding to look up."""
    if not unconfirmed:
        return []
    payouts = counted(len(unconfirmed), "payout")
    shown = ", ".join(unconfirmed[:SHOWN_PROBLEMS])
    more = (
        f" and {len(unconfirmed) - SHOWN_PROBLEMS} more"
        if len(unconfirmed) > SHOWN_PROBLEMS
        else ""
    )
    if sandbox:
        return [
            f"  cannot be checked: the sandbox of that run is gone ({payouts}: {shown}{more});"
            " they read as the ledger last heard"
        ]
    return [
        f"  unknown to the service (404), though the ledger holds them as made ({payouts}: "
        f"{shown}{more}): look them up with the platform"
    ]


def _stopped(signum: int, frame: FrameType | None) -> None:
    """uvicorn has drained; exit quietly."""


@links_app.command("serve")
def serve_command(
    port: int = typer.Option(8090, "--port", min=1, max=65535, help="Port to listen on."),
    host: Host = "127.0.0.1",
    certfile: CertFile = None,
    keyfile: KeyFile = None,
    forwarded_allow_ips: ForwardedAllowIps = None,
) -> None:
    """Answer claim URLs: mint a signed widget link and redirect the recipient to it."""
    exposure = checked_exposure(
        host, certfile, keyfile, forwarded_allow_ips, serves="claim pages and their cookie"
    )
    from payflow.api import PayoutsClient
    from payflow.links.server import (
        CLAIM_RETRY,
        MerchantId,
        claims_lead_elsewhere,
        claims_uvicorn_config,
        create_claims_app,
    )
    from payflow.links.store import LinkStore
    from payflow.webhooks import WebhookReceiver

    settings = prepare()
    check_ledger(settings)
    ledger_url = settings.ledger_url_or_default()
    token = api_token(settings, sandbox=settings.uses_sandbox)
    listening = listening_socket(host, port)  # a busy port is said before the sandbox starts
    # Claims of a ledger of another service or merchant would be paid by the wrong account.
    check_bound_service(settings)
    with ExitStack() as stack:
        stack.callback(listening.close)
        if settings.uses_sandbox:
            from payflow.sandbox import SandboxConfig, SandboxServer

            # The embedded sandbox serves the widget and sends its webhooks to a local receiver.
            receiver = stack.enter_context(WebhookReceiver(ledger_url, token))
            config = SandboxConfig.from_env().with_overrides(merchant_callback_url=receiver.url)
            sandbox = stack.enter_context(SandboxServer(config))
            api_url, widget_url = sandbox.url, settings.widget_url or sandbox.url
            typer.echo(f"payflow links: {NO_REAL_MONEY}", err=True)
            typer.echo(f"payflow links: widget served by the sandbox at {widget_url}", err=True)
        else:
            assert settings.api_url is not None
            api_url = settings.api_url
            if settings.widget_url is None:
                fail("configuration: PAYFLOW_WIDGET_URL is required with PAYFLOW_API_URL")
            widget_url = settings.widget_url
        store = LinkStore.open(ledger_url)
        stack.callback(store.close)
        client = stack.enter_context(PayoutsClient(token, base_url=api_url, retry=CLAIM_RETRY))
        merchant = MerchantId(client)
        try:
            # Asked now, so a token or merchant the widget refuses is said here in one line,
            # not shown as an error page to the first recipient who opens a claim.
            merchant.get()
        except AuthError as exc:
            fail(api_trouble(exc, then="no claim was answered"))
        except PaymentsApiError as exc:
            fail(f"cannot answer claims: {exc}")
        app_ = create_claims_app(store, client, token, widget_url, merchant)
        server = uvicorn.Server(claims_uvicorn_config(app_, host, port, exposure))
        for stop_signal in (signal.SIGTERM, signal.SIGINT):
            signal.signal(stop_signal, _stopped)
        if claims_lead_elsewhere(settings.links_url, port):
            # Claims issued with the default address led to port 8090 while this served another:
            # every recipient's link opened on nothing.
            typer.echo(
                f"payflow links: warning: claim URLs start with PAYFLOW_LINKS_URL "
                f"{settings.links_url}, which is not this server (port {port}): claims issued with "
                "it reach no server; serve on its port, or set PAYFLOW_LINKS_URL to this server's "
                "address before issuing claims",
                err=True,
            )
        claims_at = exposure.url(port) + "claim/..."
        typer.echo(f"payflow links: answering claims on {claims_at}", err=True)
        server.run(sockets=[listening])
    typer.echo("payflow links: stopped", err=True)
