"""How a run reaches the API and the ledger: a RunTarget, never secrets in parameters.

A RunTarget travels as a Prefect parameter and so may be recorded; it carries no token. The
token is read from Settings where a client is built.
"""

from __future__ import annotations

import asyncio
import hashlib
import os
import threading
from collections import Counter
from collections.abc import Awaitable, Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import TypeVar

from payflow.api import AsyncPayoutsClient, PayoutsClient
from payflow.ledger import Ledger
from payflow.ledger.service_binding import SANDBOX, bind_merchant, bind_service, service_kind
from payflow.runtime import (
    ApiEndpoint,
    ConfigurationError,
    api_endpoint,
    api_token,
    client_for,
    holds_api_token,
)
from payflow.settings import Settings

T = TypeVar("T")

# Set by a Prefect worker in the process of each flow run it starts (never by the CLI).
WORKER_RUN_VARIABLE = "PREFECT__FLOW_RUN_ID"


@dataclass(frozen=True)
class RunTarget:
    """Where one run pays: API base URL, ledger URL, callback URL, and whether it is the sandbox."""

    api_url: str
    ledger_url: str
    sandbox: bool
    callback_url: str | None = None


def serves_sandbox(settings: Settings, api_url: str | None = None, sandbox: bool = False) -> bool:
    """Whether the embedded sandbox serves a run given these arguments: the one home of that
    choice, made by `run_target` and asked by a run that sends nothing (a links file's claims
    lead to its widget) and by its reports. A given API URL is the sandbox's only when the
    caller says so; without one, the settings decide (no PAYFLOW_API_URL: the sandbox)."""
    return sandbox if api_url is not None else settings.uses_sandbox


@contextmanager
def run_target(
    settings: Settings,
    api_url: str | None = None,
    sandbox: bool = False,
    callback_url: str | None = None,
) -> Iterator[RunTarget]:
    """The given API, or (a deployment run) the configured one or an embedded sandbox: the
    sandbox only when asked for (`sandbox=True`) in a run a Prefect worker started."""
    ledger_url = settings.ledger_url_or_default()
    serving_sandbox = serves_sandbox(settings, api_url, sandbox)
    if api_url is not None:
        if not _checked_here(settings, serving_sandbox, api_url):
            check_service_binding(settings, serving_sandbox, api_url)
        yield RunTarget(api_url, ledger_url, serving_sandbox, callback_url or settings.webhook_url)
        return
    if serving_sandbox and not sandbox and os.environ.get(WORKER_RUN_VARIABLE):
        # A worker started without PAYFLOW_API_URL paid an emulator and wrote COMPLETED into
        # the shared ledger: the real recipients were never paid, and a re-upload skipped them.
        raise ConfigurationError(
            "PAYFLOW_API_URL is not set in this worker's environment: a deployed run never "
            "pays the embedded sandbox unless its parameter sandbox is true; nothing was sent"
        )
    if not _checked_here(settings, serving_sandbox, settings.api_url):
        check_service_binding(settings, serving_sandbox)
    with api_endpoint(settings) as endpoint:
        yield RunTarget(endpoint.base_url, ledger_url, endpoint.is_sandbox, settings.webhook_url)


def check_service_binding(settings: Settings, sandbox: bool, api_url: str | None = None) -> None:
    """Bind the configured ledger to the service this run sends to (the embedded sandbox, or the
    API's merchant its token answers to), or refuse the run (ConfigurationError, nothing sent)
    when the ledger holds rows sent to another."""
    kind = service_kind(sandbox)
    ledger = open_ledger(settings.ledger_url_or_default())
    bound = bind_service(ledger, kind)
    if bound == SANDBOX and kind != SANDBOX:
        raise ConfigurationError(
            f"the ledger {settings.ledger_place} holds rows paid on the embedded sandbox (no real "
            "money), which the payments API would read as already paid: give the API a ledger of "
            "its own (another PAYFLOW_HOME or PAYFLOW_LEDGER_URL); nothing was sent"
        )
    if bound != kind:
        raise ConfigurationError(
            f"the ledger {settings.ledger_place} holds rows sent to a payments API, and this run "
            "would use the embedded sandbox (PAYFLOW_API_URL is not set): set PAYFLOW_API_URL, or "
            "try the sandbox with another PAYFLOW_HOME; nothing was sent"
        )
    if sandbox or not holds_api_token(settings):
        # Without the token nothing is sent (a maker registering, a checker approving): the
        # merchant is bound by the first process that holds it.
        return
    merchant = _token_merchant(settings, api_url or settings.api_url)
    if not merchant:  # the API did not say whose token it is: the kind is all there is
        return
    if (recorded := bind_merchant(ledger, merchant)) != merchant:
        # Each merchant account pays its own: one's COMPLETED rows are not the other's payouts.
        raise ConfigurationError(
            f"the ledger {settings.ledger_place} holds payouts of merchant {recorded}, and "
            f"PAYFLOW_API_TOKEN is merchant {merchant}'s, which would read them as its own: give "
            "each merchant a ledger of its own (another PAYFLOW_HOME or PAYFLOW_LEDGER_URL); "
            "nothing was sent"
        )


# The bindings a command line checked in this process, for the flows it runs inside the block
# (`binding_checked_here`); counted, as two blocks of one key may overlap.
_checked: Counter[tuple[str, bool, str | None, str | None]] = Counter()
_checked_lock = threading.Lock()


def _binding_key(
    settings: Settings, sandbox: bool, api_url: str | None
) -> tuple[str, bool, str | None, str | None]:
    """What a binding check's outcome depends on: the ledger, the kind and, for an API, its URL
    and (as a digest, never the secret itself) the token whose merchant it asked for."""
    ledger_url = settings.ledger_url_or_default()
    if sandbox:
        return (ledger_url, True, None, None)
    token = settings.api_token.get_secret_value() if settings.api_token else ""
    digest = hashlib.sha256(token.encode()).hexdigest()
    return (ledger_url, False, (api_url or "").rstrip("/"), digest)


def _checked_here(settings: Settings, sandbox: bool, api_url: str | None) -> bool:
    with _checked_lock:
        return _checked[_binding_key(settings, sandbox, api_url)] > 0


@contextmanager
def binding_checked_here(settings: Settings, sandbox: bool) -> Iterator[None]:
    """Check the ledger's binding now (`check_service_binding`, so a refusal comes before the
    command shows anything), and let the flows this process runs inside the block with the
    same ledger, service, URL and token take it as checked: `payflow pay` asked
    GET /v1/merchants/balance twice, `payflow run` once per flow.

    Only a command line enters it. A flow started by a deployment, a worker or the console runs
    outside any such block (another process, or a key nobody marked) and checks for itself; a
    flow parameter could be set by whoever starts a run, so none says "checked". It is as safe
    as checking again: a binding, once written, is never changed (`bind_service` and
    `bind_merchant` fill only what is empty), and a token's merchant is the service's fact."""
    check_service_binding(settings, sandbox)
    key = _binding_key(settings, sandbox, settings.api_url)
    with _checked_lock:
        _checked[key] += 1
    try:
        yield
    finally:
        with _checked_lock:
            _checked[key] -= 1
            if not _checked[key]:
                del _checked[key]


def _token_merchant(settings: Settings, api_url: str | None) -> str | None:
    """The merchantId of GET /v1/merchants/balance for the configured token, or None."""
    if api_url is None:
        raise ConfigurationError("PAYFLOW_API_URL is not set")
    token = api_token(settings, sandbox=False)
    with PayoutsClient(
        token, base_url=api_url.rstrip("/"), timeout=settings.request_timeout
    ) as client:
        return client.get_balance().merchant_id


def open_client(
    target: RunTarget,
    settings: Settings | None = None,
    *,
    lanes: int = 1,
    max_in_flight: int | None = None,
) -> AsyncPayoutsClient:
    """An async client bound to the target with its share (of `lanes`) of the bounds on requests
    in flight (`max_in_flight`, default from settings) and per second."""
    settings = settings or Settings()
    endpoint = ApiEndpoint(
        target.api_url, api_token(settings, sandbox=target.sandbox), target.sandbox
    )
    return client_for(endpoint, settings, lanes=lanes, max_in_flight=max_in_flight)


def with_client(
    target: RunTarget,
    work: Callable[[AsyncPayoutsClient], Awaitable[T]],
    *,
    lanes: int = 1,
    max_in_flight: int | None = None,
) -> T:
    """Run `work(client)` to the end on a fresh event loop with a client for the target.

    The one bridge from a synchronous Prefect task to the async client."""

    async def run() -> T:
        async with open_client(target, lanes=lanes, max_in_flight=max_in_flight) as client:
            return await work(client)

    return asyncio.run(run())


_ledgers: dict[str, Ledger] = {}
_ledgers_lock = threading.Lock()


def open_ledger(url: str) -> Ledger:
    """The process's one Ledger for `url` (migrated once, shared by every task thread)."""
    with _ledgers_lock:
        ledger = _ledgers.get(url)
        if ledger is None:
            ledger = _ledgers[url] = Ledger.open(url)
        return ledger


def ledger_url_parameter(url: str, settings: Settings) -> str | None:
    """`url` to pass a flow run in this process as its `ledger_url` parameter.

    A URL with a password is never passed: Prefect keeps a flow run's parameters in its
    database and shows them in its UI, and a hidden one (`***`) cannot connect. The flow then
    reads its settings' ledger, which is `url` only when `settings` say so: otherwise it would
    pay from another ledger than the one the caller read, so that is a ConfigurationError,
    before anything is done."""
    from sqlalchemy.engine import make_url

    given = make_url(url)
    if not given.password:
        return url
    configured = make_url(settings.ledger_url_or_default())
    if given.render_as_string(hide_password=False) == configured.render_as_string(
        hide_password=False
    ):
        return None
    raise ConfigurationError(
        f"the ledger {given.render_as_string(hide_password=True)} holds a password and is not "
        "PAYFLOW_LEDGER_URL: a password is never handed to a flow as a parameter, so its pay "
        "run would read another ledger; set PAYFLOW_LEDGER_URL to it instead; nothing was done"
    )
