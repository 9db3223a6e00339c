"""Every command builds its client with `client_for`, so each honours the same settings."""

from __future__ import annotations

import asyncio
import time

from pydantic import SecretStr

from payflow.runtime import ApiEndpoint, client_for
from payflow.sandbox import SandboxServer
from payflow.settings import Settings


def _seconds_for(endpoint: ApiEndpoint, settings: Settings, calls: int, lanes: int = 1) -> float:
    async def run() -> float:
        async with client_for(endpoint, settings, lanes=lanes) as client:
            started = time.monotonic()
            await asyncio.gather(*(client.get_balance() for _ in range(calls)))
            return time.monotonic() - started

    return asyncio.run(run())


def _endpoint(sandbox: SandboxServer) -> ApiEndpoint:
    return ApiEndpoint(sandbox.url, SecretStr(sandbox.token), is_sandbox=True)


def test_the_configured_requests_per_second_space_out_the_calls(
    sandbox_server: SandboxServer,
) -> None:
    settings = Settings(max_requests_per_second=40)
    # Eleven starts at 40 per second cannot all begin sooner than ten intervals after the first.
    assert _seconds_for(_endpoint(sandbox_server), settings, calls=11) >= 10 / 40 - 0.01


def test_each_lane_gets_its_share_of_the_rate(sandbox_server: SandboxServer) -> None:
    settings = Settings(max_requests_per_second=40)
    assert _seconds_for(_endpoint(sandbox_server), settings, calls=11, lanes=4) >= 10 / 10 - 0.01


def test_the_client_keeps_the_token_out_of_its_repr(sandbox_server: SandboxServer) -> None:
    endpoint = _endpoint(sandbox_server)
    client = client_for(endpoint, Settings())
    assert sandbox_server.token not in repr(client)
    assert sandbox_server.token not in repr(endpoint)
