"""The one sandbox factory: real sandbox servers on 127.0.0.1 with sub-second delays.

`SandboxFactory.start(**overrides)` takes `SandboxConfig` fields or fault settings by name, e.g.
`start(error_rate=0.3, seed=7)` or `start(final_delay=0.5, merchant_callback_url=receiver_url)`;
`close()` stops every server it started. The `make_sandbox` and `sandbox_server` fixtures in
tests/conftest.py wrap it.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any

from payflow.sandbox import SandboxConfig, SandboxServer

# Fast enough for tests, slow enough that CREATED and PROCESSING can be observed by polling.
FAST_SANDBOX: dict[str, Any] = {
    "processing_delay": 0.05,
    "final_delay": 0.1,
    "correction_delay": 0.4,
    "webhook_backoff": 0.05,
    "webhook_timeout": 2.0,
}

MakeSandbox = Callable[..., SandboxServer]


def fast_config(**overrides: Any) -> SandboxConfig:
    """The test sandbox's configuration: fast delays, then `overrides`."""
    return SandboxConfig().with_overrides(**{**FAST_SANDBOX, **overrides})


class SandboxFactory:
    """Starts sandboxes on demand and stops them all at `close()`."""

    def __init__(self) -> None:
        self._servers: list[SandboxServer] = []

    def start(self, **overrides: Any) -> SandboxServer:
        """A started sandbox with fast delays plus `overrides`."""
        server = SandboxServer(fast_config(**overrides)).start()
        self._servers.append(server)
        return server

    def close(self) -> None:
        """Stop every server this factory started."""
        while self._servers:
            self._servers.pop().stop()
