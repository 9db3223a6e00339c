"""`payflow sandbox --port N`: serve the emulated payments service until Ctrl-C or SIGTERM."""

from __future__ import annotations

import contextlib
import signal
import socket
from collections.abc import Iterator
from types import FrameType
from typing import Any

import typer
import uvicorn

from payflow.cli.app import app, fail
from payflow.sandbox.config import SandboxConfig
from payflow.sandbox.gate import quiet_lost_response_log
from payflow.sandbox.payouts import CORRECTED, OUTCOMES, STUCK
from payflow.sandbox.server import uvicorn_config

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


class _SignalStoppedServer(uvicorn.Server):
    """uvicorn re-raises the stop signal after shutdown (killing us by SIGTERM); we exit 0."""

    @contextlib.contextmanager
    def capture_signals(self) -> Iterator[None]:
        previous = {sig: signal.signal(sig, self._stop) for sig in STOP_SIGNALS}
        try:
            yield
        finally:
            for sig, handler in previous.items():
                signal.signal(sig, handler)

    def _stop(self, sig: int, frame: FrameType | None) -> None:
        if self.should_exit:  # a second Ctrl-C: do not wait for open connections
            self.force_exit = True
        self.should_exit = True


def _outcome(status: str | None, message: str | None) -> str:
    if status is STUCK:
        return "stays PROCESSING"
    if status == CORRECTED:
        return "COMPLETED, then corrected to FAILED without a webhook"
    return f"{status} ({message})" if message else f"{status}"


# Read from the sandbox's own table, so the help cannot drift from what the sandbox does.
OUTCOMES_HELP = (
    "Make payouts fail: the last four characters of a payout's requisites choose its outcome: "
    + "; ".join(f"{end} {_outcome(*outcome)}" for end, outcome in OUTCOMES.items())
    + "; anything else COMPLETED. The rates above inject faults. More: docs/sandbox.md "
    "(refunds' outcomes, state moves, the widget)."
)


def _rate(help_text: str) -> Any:
    return typer.Option(None, min=0.0, max=1.0, help=help_text)


@app.command("sandbox", epilog=OUTCOMES_HELP)
def sandbox(
    port: int = typer.Option(8080, "--port", min=0, max=65535, help="Port (0: any free one)."),
    host: str = typer.Option("127.0.0.1", "--host", help="Address to bind."),
    latency: float | None = typer.Option(None, min=0.0, help="Seconds added to each request."),
    error_rate: float | None = _rate("Share of /v1 requests answered 500 or 503."),
    rate_limit_rate: float | None = _rate("Share of /v1 requests answered 429."),
    retry_after: int | None = typer.Option(None, min=0, help="Retry-After of a 429, seconds."),
    lost_response_rate: float | None = _rate("Share of created payouts whose response is cut."),
    webhook_drop_rate: float | None = _rate("Share of webhooks never sent."),
    webhook_duplicate_rate: float | None = _rate("Share of webhooks sent twice."),
    webhook_reorder_rate: float | None = _rate("Share of PROCESSING webhooks sent after final."),
    webhook_bad_signature_rate: float | None = _rate("Share of webhooks badly signed."),
    seed: int | None = typer.Option(None, help="Seed of the fault dice."),
    processing_delay: float | None = typer.Option(None, min=0.0, help="CREATED -> PROCESSING."),
    final_delay: float | None = typer.Option(None, min=0.0, help="PROCESSING -> final status."),
    correction_delay: float | None = typer.Option(None, min=0.0, help="`6666` correction delay."),
    callback_url: str | None = typer.Option(
        None, "--callback-url", help="Merchant settings webhook address (payouts without one)."
    ),
) -> None:
    """Serve the sandbox: the payments API emulated on this machine; no real money moves."""
    given = {name: value for name, value in locals().items() if value is not None}
    overrides = {k: v for k, v in given.items() if k not in {"port", "host", "callback_url"}}
    if callback_url is not None:
        overrides["merchant_callback_url"] = callback_url
    try:
        config = SandboxConfig.from_env().with_overrides(**overrides)
    except ValueError as exc:
        fail(f"bad sandbox setting: {exc}")
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    try:
        listener.bind((host, port))
    except OSError as exc:
        listener.close()
        fail(f"cannot listen on {host}:{port}: {exc.strerror}")
    listener.listen(2048)  # connections made as soon as the URL is printed wait in the backlog
    bound_port = listener.getsockname()[1]
    server = _SignalStoppedServer(uvicorn_config(config, host, bound_port))
    quiet_lost_response_log()
    typer.echo(f"payflow sandbox: serving on http://{host}:{bound_port}")
    typer.echo(f"payflow sandbox: token {config.token}")
    typer.echo("payflow sandbox: emulated service, no real money moves; Ctrl-C to stop", err=True)
    try:
        server.run(sockets=[listener])
    finally:
        listener.close()
    typer.echo("payflow sandbox: stopped", err=True)
