"""Injected faults on /v1 routes: 500/503, 429 with Retry-After, lost responses, latency."""

from __future__ import annotations

import time

import httpx
import pytest
from sandbox_support import payout_body, wait_for
from support.stats import sandbox_stats

from payflow.sandbox import SandboxConfig


def _client(sandbox, timeout: float = 5.0) -> httpx.Client:
    return httpx.Client(
        base_url=sandbox.url, headers={"X-Api-Token": sandbox.token}, timeout=timeout
    )


@pytest.mark.parametrize("sandbox_server", [{"error_rate": 1.0}], indirect=True)
def test_error_rate_answers_500_or_503_before_anything_is_created(api, sandbox):
    codes = {
        api.post("/v1/payouts", json=payout_body(externalId=f"e{n}")).status_code for n in range(20)
    }

    assert codes == {500, 503}
    assert sandbox_stats(sandbox)["payouts"] == []
    assert sandbox_stats(sandbox)["createAttempts"] == {}  # the handler was never reached


@pytest.mark.parametrize(
    "sandbox_server", [{"rate_limit_rate": 1.0, "retry_after": 7}], indirect=True
)
def test_rate_limit_answers_429_with_retry_after(api):
    response = api.get("/v1/payouts/services")

    assert response.status_code == 429
    assert response.headers["Retry-After"] == "7"
    assert response.json()["error"]["code"] == "RATE_LIMITED"


def test_partial_rates_are_reproducible_with_the_same_seed(make_sandbox):
    def run(seed: int) -> list[int]:
        sandbox = make_sandbox(error_rate=0.3, rate_limit_rate=0.3, seed=seed)
        with _client(sandbox) as api:
            return [api.get("/v1/payouts/services").status_code for _ in range(30)]

    first, again, other = run(11), run(11), run(12)

    assert first == again
    assert first != other
    assert {200, 429} <= set(first) and set(first) & {500, 503}


@pytest.mark.parametrize("sandbox_server", [{"lost_response_rate": 1.0}], indirect=True)
def test_lost_response_drops_the_connection_after_the_payout_was_created(api, sandbox):
    with pytest.raises(httpx.RemoteProtocolError):
        api.post("/v1/payouts", json=payout_body(externalId="lost-1"))

    found = api.get("/v1/payouts/external/lost-1")
    assert found.status_code == 200
    assert found.json()["status"] in {"CREATED", "PROCESSING", "COMPLETED"}
    seen = sandbox_stats(sandbox)
    assert seen["createAttempts"] == {"lost-1": 1}
    assert seen["payoutsByExternalId"] == {"lost-1": 1}


def test_faults_never_touch_sandbox_routes(make_sandbox):
    sandbox = make_sandbox(error_rate=1.0, latency=2.0)
    started = time.monotonic()

    assert httpx.get(f"{sandbox.url}/_sandbox/stats").status_code == 200
    assert time.monotonic() - started < 1.0


def test_latency_delays_every_v1_request(make_sandbox):
    sandbox = make_sandbox(latency=0.3)
    with _client(sandbox) as api:
        started = time.monotonic()
        assert api.get("/v1/payouts/services").status_code == 200
        assert time.monotonic() - started >= 0.3
        with _client(sandbox, timeout=0.1) as impatient, pytest.raises(httpx.ReadTimeout):
            impatient.get("/v1/payouts/services")


def test_faults_change_at_run_time_and_bad_values_are_refused(api, sandbox):
    assert api.get("/v1/payouts/services").status_code == 200

    changed = httpx.post(f"{sandbox.url}/_sandbox/faults", json={"errorRate": 1, "seed": 3})
    refused = httpx.post(f"{sandbox.url}/_sandbox/faults", json={"error_rate": 2})
    unknown = httpx.post(f"{sandbox.url}/_sandbox/faults", json={"explode": 1})

    assert changed.status_code == 200 and changed.json()["error_rate"] == 1
    assert api.get("/v1/payouts/services").status_code in {500, 503}
    assert refused.status_code == 400 and unknown.status_code == 400
    assert sandbox_stats(sandbox)["faults"]["error_rate"] == 1


def test_config_from_env_reads_prefixed_variables():
    config = SandboxConfig.from_env(
        {
            "PAYFLOW_SANDBOX_TOKEN": "t-123",
            "PAYFLOW_SANDBOX_FINAL_DELAY": "0.25",
            "PAYFLOW_SANDBOX_BALANCES": "RUB=10.50, xof=500",
            "PAYFLOW_SANDBOX_ERROR_RATE": "0.2",
            "PAYFLOW_SANDBOX_RETRY_AFTER": "4",
            "PAYFLOW_SANDBOX_SEED": "9",
        }
    )

    assert config.token == "t-123"
    assert config.final_delay == 0.25
    assert {k: str(v) for k, v in config.balances.items()} == {"RUB": "10.50", "XOF": "500"}
    assert (config.faults.error_rate, config.faults.retry_after, config.faults.seed) == (0.2, 4, 9)
    assert "t-123" not in repr(config)
    with pytest.raises(ValueError, match="error_rate"):
        SandboxConfig.from_env({"PAYFLOW_SANDBOX_ERROR_RATE": "1.5"})
    with pytest.raises(ValueError, match="final_delay"):
        SandboxConfig.from_env({"PAYFLOW_SANDBOX_FINAL_DELAY": "soon"})


def test_lost_response_payout_still_progresses(make_sandbox):
    sandbox = make_sandbox(lost_response_rate=1.0)
    with _client(sandbox) as api:
        with pytest.raises(httpx.RemoteProtocolError):
            api.post("/v1/payouts", json=payout_body(externalId="lost-2"))
        wait_for(api, "/v1/payouts/external/lost-2", lambda p: p["status"] == "COMPLETED")
