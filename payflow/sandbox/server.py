"""Run the sandbox with uvicorn in a daemon thread with its own event loop (tests, embedded)."""

from __future__ import annotations

import uvicorn

from payflow.sandbox.app import create_app
from payflow.sandbox.config import SandboxConfig
from payflow.sandbox.gate import quiet_lost_response_log
from payflow.serving import BackgroundServer


def uvicorn_config(config: SandboxConfig, host: str, port: int) -> uvicorn.Config:
    """The uvicorn settings the sandbox is served with (thread or command line)."""
    return uvicorn.Config(
        create_app(config),
        host=host,
        port=port,
        log_level="warning",
        access_log=False,
        timeout_graceful_shutdown=1,
    )


class SandboxServer(BackgroundServer):
    """`with SandboxServer(config) as sandbox:` serves on `sandbox.url` until the block ends;
    stopping drops pending moves and webhooks."""

    thread_name = "payflow-sandbox"

    def __init__(
        self, config: SandboxConfig | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        super().__init__(host, port)
        self.config = config or SandboxConfig()

    @property
    def url(self) -> str:
        """Base URL of the API, without a trailing slash (e.g. `http://127.0.0.1:53211`)."""
        return f"http://{self._host}:{self._port}"

    @property
    def token(self) -> str:
        """The API token the sandbox accepts (also the webhook signing key)."""
        return self.config.token

    @property
    def merchant_id(self) -> str:
        """The merchant's fixed id (UUID)."""
        return self.config.merchant_id

    def _uvicorn_config(self) -> uvicorn.Config:
        quiet_lost_response_log()
        return uvicorn_config(self.config, self._host, self._port)
