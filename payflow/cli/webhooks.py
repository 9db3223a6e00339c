"""`payflow webhooks --port N`: serve the signed-webhook receiver until SIGTERM or Ctrl-C."""

from __future__ import annotations

import logging
import signal
from types import FrameType

import typer
import uvicorn

from payflow.cli.app import app, fail
from payflow.cli.exposure import CertFile, ForwardedAllowIps, Host, KeyFile, checked_exposure
from payflow.cli.setup import listening_socket, load_settings
from payflow.runtime import ConfigurationError, api_token, open_ledger
from payflow.settings import Settings
from payflow.webhooks.app import WEBHOOK_PATH, create_receiver_app


def webhook_token(settings: Settings) -> str:
    """The key webhooks are signed with: the API token, or the sandbox's when no API URL is set."""
    try:
        token = api_token(settings, sandbox=settings.uses_sandbox)
    except ConfigurationError as exc:
        fail(f"{exc}: cannot verify webhooks")
    return token.get_secret_value()


def _stopped(signum: int, frame: FrameType | None) -> None:
    """Nothing left to do: the server has already drained and closed."""


@app.command("webhooks")
def webhooks(
    port: int = typer.Option(8081, "--port", min=1, max=65535, help="Port to listen on."),
    host: Host = "127.0.0.1",
    certfile: CertFile = None,
    keyfile: KeyFile = None,
    forwarded_allow_ips: ForwardedAllowIps = None,
) -> None:
    """Receive signed payout webhooks and record their statuses in the ledger."""
    exposure = checked_exposure(
        host, certfile, keyfile, forwarded_allow_ips, serves="payout statuses"
    )
    settings = load_settings()
    token = webhook_token(settings)
    listening = listening_socket(host, port)
    ledger = open_ledger(settings)
    logging.getLogger("payflow").setLevel(logging.INFO)
    url = exposure.url(port).rstrip("/") + WEBHOOK_PATH
    typer.echo(f"payflow webhooks: listening on {url}", err=True)
    config = uvicorn.Config(
        create_receiver_app(ledger, token),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        **exposure.uvicorn_options(),
    )
    server = uvicorn.Server(config)
    # uvicorn drains on SIGTERM/SIGINT, then re-raises the signal to the handler it found;
    # a quiet handler makes that a clean exit 0 instead of a kill or a KeyboardInterrupt.
    for stop_signal in (signal.SIGTERM, signal.SIGINT):
        signal.signal(stop_signal, _stopped)
    try:
        server.run(sockets=[listening])
    finally:
        listening.close()
        ledger.close()
    typer.echo("payflow webhooks: stopped", err=True)
