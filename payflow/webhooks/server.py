"""Run the webhook receiver with uvicorn in a background thread (tests, the in-process run)."""

from __future__ import annotations

import uvicorn
from pydantic import SecretStr

from payflow.console.exposure import Exposure
from payflow.ledger import Ledger
from payflow.serving import BackgroundServer
from payflow.webhooks.app import WEBHOOK_PATH, create_receiver_app


class WebhookReceiver(BackgroundServer):
    """`with WebhookReceiver(ledger_url, token) as receiver:` serves on `receiver.url`; the
    ledger is opened when it starts and closed when it stops."""

    thread_name = "payflow-webhooks"

    def __init__(
        self,
        ledger_url: str,
        token: str | SecretStr,
        host: str = "127.0.0.1",
        port: int = 0,
    ) -> None:
        super().__init__(host, port)
        self._ledger_url = ledger_url
        self._token = token if isinstance(token, SecretStr) else SecretStr(token)
        self._ledger: Ledger | None = None

    @property
    def url(self) -> str:
        """The address to give payouts as callbackUrl."""
        return f"http://{self._host}:{self.port}{WEBHOOK_PATH}"

    def _opening(self) -> None:
        self._ledger = Ledger.open(self._ledger_url)

    def _uvicorn_config(self) -> uvicorn.Config:
        assert self._ledger is not None
        app = create_receiver_app(self._ledger, self._token)
        return uvicorn.Config(
            app,
            host=self._host,
            port=self._port,
            log_level="warning",
            access_log=False,
            **Exposure(self._host).uvicorn_options(),  # no proxy header trusted, as everywhere
        )

    def _closed(self) -> None:
        if self._ledger is not None:
            self._ledger.close()
            self._ledger = None
