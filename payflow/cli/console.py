"""`payflow console --port N`: the operators' web console; `payflow console add-user NAME`."""

from __future__ import annotations

import signal
import sys
from contextlib import ExitStack
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer
import uvicorn

from payflow.cli.app import app, fail
from payflow.cli.setup import check_bound_service, listening_socket, prepare
from payflow.console.exposure import Exposure, ExposureRefused, proxy_addresses
from payflow.console.operators import OperatorError, operator_count, parse_roles
from payflow.prefect_server import PrefectServerNotStarted, TemporaryPrefect
from payflow.runtime import NO_REAL_MONEY, api_endpoint, open_ledger

console_app = typer.Typer(
    help="The operators' web console: upload, approve, follow, reconcile, rerun.",
    invoke_without_command=True,
)
app.add_typer(console_app, name="console")


def _stopped(signum: int, frame: FrameType | None) -> None:
    """uvicorn has drained and closed; exit cleanly."""


def _stopped_while_starting(signum: int, frame: FrameType | None) -> None:
    """Unwind at once: the ledger and sandbox close, the temporary Prefect server stops at exit."""
    print(
        f"payflow console: stopped on {signal.Signals(signum).name} while starting", file=sys.stderr
    )
    raise SystemExit(128 + signum)


@console_app.callback()
def console_command(
    ctx: typer.Context,
    port: Annotated[int, typer.Option("--port", min=1, max=65535, help="Port.")] = 8300,
    host: Annotated[
        str,
        typer.Option("--host", help="Address to bind; beyond loopback needs TLS or a proxy."),
    ] = "127.0.0.1",
    certfile: Annotated[
        Path | None, typer.Option("--certfile", help="TLS certificate (PEM): serve HTTPS.")
    ] = None,
    keyfile: Annotated[
        Path | None, typer.Option("--keyfile", help="TLS private key (PEM) of --certfile.")
    ] = None,
    forwarded_allow_ips: Annotated[
        str | None,
        typer.Option(
            "--forwarded-allow-ips",
            help="Comma-separated addresses of the TLS proxy in front; its X-Forwarded-* "
            "headers are trusted, nobody else's.",
        ),
    ] = None,
) -> None:
    """Serve the console; without PAYFLOW_API_URL it pays the embedded sandbox."""
    if ctx.invoked_subcommand is not None:
        return
    try:
        exposure = Exposure(host, certfile, keyfile, proxy_addresses(forwarded_allow_ips))
        exposure.check()
    except ExposureRefused as exc:
        fail(str(exc))
    from payflow.approvals.decide import prefect_api_configured
    from payflow.connections import RunTarget
    from payflow.console.app import create_app
    from payflow.console.context import ConsoleContext
    from payflow.webhooks import WebhookReceiver

    settings = prepare()
    listening = listening_socket(host, port)  # before anything starts: a busy port is first
    # A ledger of the other kind of service is refused before anything starts, as a run is:
    # otherwise its pages showed the batches and only a pay run's failure said why.
    check_bound_service(settings)
    # Without a Prefect server of the operator's, pay runs go to a temporary one started now,
    # the way `payflow run` starts it: it boots while the ledger and the sandbox open.
    # Until uvicorn serves, a stop must unwind, not kill: a killed process leaves its
    # temporary Prefect server running, and SIGINT's KeyboardInterrupt prints a traceback.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _stopped_while_starting)
    own_prefect = None
    if not prefect_api_configured():
        typer.echo("starting Prefect's local server for the console's pay runs", err=True)
        own_prefect = TemporaryPrefect.for_settings(settings)
    try:
        with ExitStack() as stack:
            ledger = stack.enter_context(open_ledger(settings))
            callback_url = settings.webhook_url
            if settings.api_url is not None:
                # A target carries no token (clients read it where they are built): a console
                # of makers and checkers without PAYFLOW_API_TOKEN serves every page, and what
                # would ask the service says it cannot.
                base_url, is_sandbox = settings.api_url.rstrip("/"), False
            else:
                endpoint = stack.enter_context(api_endpoint(settings))
                base_url, is_sandbox = endpoint.base_url, True
                print(NO_REAL_MONEY, file=sys.stderr)
                if callback_url is None:
                    receiver = WebhookReceiver(settings.ledger_url_or_default(), endpoint.token)
                    callback_url = stack.enter_context(receiver).url
            target = RunTarget(base_url, settings.ledger_url_or_default(), is_sandbox, callback_url)
            if own_prefect is not None:
                own_prefect.ready()
            context = ConsoleContext(
                settings,
                ledger,
                target,
                # The temporary server has no deployments: pay in the console's process.
                pay_through_prefect=False if own_prefect is not None else None,
                prefect_api_url=own_prefect.api_url if own_prefect is not None else None,
            )
            config = uvicorn.Config(
                create_app(context),
                host=host,
                port=port,
                log_level="warning",
                **exposure.uvicorn_options(),
            )
            server = uvicorn.Server(config)
            if operator_count(ledger) == 0:
                typer.echo(
                    "first run: no operators yet. Create an admin, sign in as them, then add "
                    "the others:\n"
                    "  payflow console add-user ADMIN --role admin\n"
                    "  payflow login ADMIN\n"
                    "  payflow console add-user NAME --role maker\n"
                    "  payflow console add-user OTHER --role checker",
                    err=True,
                )
            for stop_signal in (signal.SIGTERM, signal.SIGINT):
                signal.signal(stop_signal, _stopped)
            typer.echo(f"payflow console: {exposure.url(port)}")
            server.run(sockets=[listening])
    except PrefectServerNotStarted as exc:
        fail(str(exc))


@console_app.command("add-user")
def add_user_command(
    name: Annotated[str, typer.Argument(help="The operator's sign-in name.")],
    role: Annotated[
        list[str],
        typer.Option(
            "--role",
            help="maker (uploads, reruns), checker (approves) or admin (the policy); "
            "give it again for several.",
        ),
    ],
    os_account: Annotated[
        str | None,
        typer.Option(
            "--os-account",
            help="The OS account whose files dropped in a deployment's inbox are this "
            "operator's batches.",
        ),
    ] = None,
    password_stdin: Annotated[
        bool, typer.Option("--password-stdin", help="Read the password from standard input.")
    ] = False,
    notify_to: Annotated[
        str | None,
        typer.Option(
            "--notify-to",
            help="The operator's own e-mail address: told there what needs them (see "
            "PAYFLOW_NOTIFY's people= receiver).",
        ),
    ] = None,
) -> None:
    """Create an operator (console and command line alike); the password comes from a prompt
    (or stdin) and is stored hashed."""
    settings = prepare()
    try:
        roles = parse_roles(role)
    except OperatorError as exc:
        fail(str(exc))
    from payflow.acts.actor import NotAllowed
    from payflow.acts.operators import add_person, first_must_be_admin, may_add
    from payflow.cli.signin import signed_in

    with open_ledger(settings) as ledger:
        first = first_must_be_admin(ledger)
        admin = None if first else signed_in(settings, ledger)
        try:
            may_add(ledger, admin, roles)  # before anyone types a password for nothing
        except NotAllowed as exc:
            fail(f"{exc}; nothing was created")
    if password_stdin or not sys.stdin.isatty():
        password = sys.stdin.readline().rstrip("\n")
    else:
        password = typer.prompt("Password", hide_input=True, confirmation_prompt=True)
    try:
        with open_ledger(settings) as ledger:
            operator = add_person(
                ledger, admin, name, roles, password, os_account=os_account, notify_to=notify_to
            )
    except (OperatorError, NotAllowed) as exc:
        fail(f"{exc}; nothing was created")
    if first:
        print(
            f"payflow: {operator.name} is this ledger's first admin: from now on only a signed-in "
            "admin adds operators (payflow login NAME first)",
            file=sys.stderr,
        )
    typer.echo(f"operator {operator.name} ({operator.role}) created")


@console_app.command("set-notify")
def set_notify_command(
    name: Annotated[str, typer.Argument(help="The operator's sign-in name.")],
    address: Annotated[
        str, typer.Argument(help="Their own e-mail address; an empty string clears it.")
    ],
) -> None:
    """Set where an operator is told what needs them (unpaid rows of their batch, a batch
    waiting for their approval); a signed-in admin only."""
    from payflow.acts.actor import NotAllowed
    from payflow.acts.operators import set_address
    from payflow.cli.signin import signed_in

    settings = prepare()
    try:
        with open_ledger(settings) as ledger:
            operator = set_address(ledger, signed_in(settings, ledger), name, address)
    except (OperatorError, NotAllowed) as exc:
        fail(f"{exc}; nothing was changed")
    typer.echo(
        f"operator {operator.name} is told at {operator.notify_to}"
        if operator.notify_to
        else f"operator {operator.name} has no address of their own now"
    )
