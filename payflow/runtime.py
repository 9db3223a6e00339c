"""Where the payments API is for this run: the configured service, or the embedded sandbox."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TYPE_CHECKING

from pydantic import SecretStr

from payflow.expected import ExpectedFailure
from payflow.settings import Settings

if TYPE_CHECKING:
    from payflow.api import AsyncPayoutsClient
    from payflow.ledger import Ledger

NO_REAL_MONEY = (
    "sandbox: no PAYFLOW_API_URL is set, so the embedded sandbox served; no real money moved"
)
# The last line of an output about money the embedded sandbox moved, with or without
# PAYFLOW_API_URL now (a ledger bound to the sandbox keeps its rows' kind).
NO_REAL_MONEY_MOVED = "sandbox: no real money moved"


class ConfigurationError(ExpectedFailure):
    """The settings cannot work together; the message says which one to fix."""


def open_ledger(settings: Settings) -> Ledger:
    """The configured ledger, migrated; a ConfigurationError naming the setting if it cannot."""
    # Imported here: commands that never touch the ledger do not pay for SQLAlchemy and Alembic.
    from sqlalchemy.exc import SQLAlchemyError

    from payflow.ledger import Ledger

    try:
        return Ledger.open(settings.ledger_url_or_default())
    except (SQLAlchemyError, OSError, ValueError) as exc:
        raise ConfigurationError(
            f"PAYFLOW_LEDGER_URL: cannot open the ledger: {_reason(exc)}"
        ) from None


def _reason(exc: BaseException) -> str:
    # The driver's own first line ("connection refused", "unable to open database file"); never
    # the URL, which may hold a password.
    cause = getattr(exc, "orig", None) or exc
    lines = str(cause).strip().splitlines() or [type(cause).__name__]
    return lines[0]


@dataclass(frozen=True)
class ApiEndpoint:
    """The base URL and token to talk to, and whether it is the sandbox."""

    base_url: str
    token: SecretStr
    is_sandbox: bool

    def __repr__(self) -> str:
        return f"ApiEndpoint(base_url={self.base_url!r}, is_sandbox={self.is_sandbox})"


def client_for(
    endpoint: ApiEndpoint,
    settings: Settings,
    *,
    lanes: int = 1,
    max_in_flight: int | None = None,
) -> AsyncPayoutsClient:
    """The one way to build an async client: the endpoint's token and URL, the configured timeout,
    and this caller's share (of `lanes`) of the bounds on requests in flight and per second."""
    from payflow.api import AsyncPayoutsClient

    per_second = settings.max_requests_per_second
    return AsyncPayoutsClient(
        endpoint.token,
        base_url=endpoint.base_url,
        timeout=settings.request_timeout,
        max_in_flight=max(1, (max_in_flight or settings.max_in_flight) // lanes),
        max_requests_per_second=per_second / lanes if per_second else None,
    )


def holds_api_token(settings: Settings) -> bool:
    """Whether this process holds PAYFLOW_API_TOKEN: a maker's or checker's need not (their
    acts only read and write the ledger); the paying side must."""
    return settings.api_token is not None and bool(settings.api_token.get_secret_value())


def api_token(settings: Settings, *, sandbox: bool) -> SecretStr:
    """The token for requests and webhook signatures: the merchant's, or the sandbox's."""
    if sandbox:
        from payflow.sandbox import SandboxConfig

        return SecretStr(SandboxConfig.from_env().token)
    if settings.api_token is None or not holds_api_token(settings):
        raise ConfigurationError("PAYFLOW_API_URL is set but PAYFLOW_API_TOKEN is not")
    return settings.api_token


@contextmanager
def api_endpoint(settings: Settings) -> Iterator[ApiEndpoint]:
    """Yield the configured API, or start the embedded sandbox for the block's duration."""
    if settings.api_url is not None:
        token = api_token(settings, sandbox=False)
        yield ApiEndpoint(settings.api_url.rstrip("/"), token, is_sandbox=False)
        return
    # Imported here: a run against the real service never loads the emulator.
    from payflow.sandbox import SandboxConfig, SandboxServer

    config = SandboxConfig.from_env()
    with SandboxServer(config) as server:
        yield ApiEndpoint(server.url, SecretStr(server.token), is_sandbox=True)
