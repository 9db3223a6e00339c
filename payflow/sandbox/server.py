"""Run the sandbox with uvicorn in a daemon thread with its own event loop (tests, embedded)."""

from __future__ import annotations

from types import TracebackType

import uvicorn

from payflow.sandbox.app import create_app
from payflow.sandbox.config import SandboxConfig
from payflow.sandbox.gate import quiet_lost_response_log
from payflow.serving import ThreadedServer


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


class SandboxServer:
    """`with SandboxServer(config) as sandbox:` serves on `sandbox.url` until the block ends."""

    def __init__(
        self, config: SandboxConfig | None = None, host: str = "127.0.0.1", port: int = 0
    ) -> None:
        self.config = config or SandboxConfig()
        self._host = host
        self._port = port
        self._runner: ThreadedServer | None = None

    def __repr__(self) -> str:
        return f"SandboxServer(host={self._host!r}, port={self._port})"

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

    def start(self) -> SandboxServer:
        """Serve; returns once the socket accepts connections."""
        quiet_lost_response_log()
        config = uvicorn_config(self.config, self._host, self._port)
        self._runner = ThreadedServer(config, name="payflow-sandbox")
        self._port = self._runner.start()
        return self

    def stop(self) -> None:
        """Stop serving (pending moves and webhooks are dropped); safe to call twice."""
        if self._runner is not None:
            self._runner.stop()
            self._runner = None

    def __enter__(self) -> SandboxServer:
        return self.start()

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.stop()
