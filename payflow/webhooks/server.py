"""Run the webhook receiver with uvicorn in a background thread (tests, the in-process run)."""

from __future__ import annotations

from types import TracebackType

import uvicorn
from pydantic import SecretStr

from payflow.ledger import Ledger
from payflow.serving import ThreadedServer
from payflow.webhooks.app import WEBHOOK_PATH, create_receiver_app


class WebhookReceiver:
    """`with WebhookReceiver(ledger_url, token) as receiver:` serves on `receiver.url`."""

    def __init__(
        self,
        ledger_url: str,
        token: str | SecretStr,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        self._ledger_url = ledger_url
        self._token = token if isinstance(token, SecretStr) else SecretStr(token)
        self._host = host
        self._port = port
        self._runner: ThreadedServer | None = None
        self._ledger: Ledger | None = None

    def __repr__(self) -> str:
        return f"WebhookReceiver(host={self._host!r}, port={self._port})"

    @property
    def url(self) -> str:
        """The address to give payouts as callbackUrl."""
        return f"http://{self._host}:{self.port}{WEBHOOK_PATH}"

    @property
    def port(self) -> int:
        """The bound port (the real one once started, when 0 was asked for)."""
        return self._port

    def start(self) -> WebhookReceiver:
        """Open the ledger and serve; returns once the socket accepts connections."""
        self._ledger = Ledger.open(self._ledger_url)
        app = create_receiver_app(self._ledger, self._token)
        config = uvicorn.Config(
            app, host=self._host, port=self._port, log_level="warning", access_log=False
        )
        self._runner = ThreadedServer(config, name="payflow-webhooks")
        try:
            self._port = self._runner.start()
        except RuntimeError:
            self.stop()
            raise
        return self

    def stop(self) -> None:
        """Stop serving and close the ledger; safe to call twice."""
        if self._runner is not None:
            self._runner.stop()
            self._runner = None
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None

    def __enter__(self) -> WebhookReceiver:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
