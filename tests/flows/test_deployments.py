"""prefect.yaml declares deployments whose entrypoints are real flows and carries no secret."""

from __future__ import annotations

import importlib
from pathlib import Path

import pytest
import yaml
from prefect import Flow
from prefect.exceptions import SignatureMismatchError

REPO = Path(__file__).resolve().parents[2]


def _deployments() -> list[dict]:
    config = yaml.safe_load((REPO / "prefect.yaml").read_text(encoding="utf-8"))
    return config["deployments"]


def test_every_entrypoint_is_a_flow_in_flows():
    deployments = _deployments()
    assert {d["name"] for d in deployments} >= {
        "daily-payouts",
        "one-batch",
        "pay-batch",
        "reconcile-pending",
        "reconcile-recent",
        "rerun-failed",
        "watchdog",
    }
    for deployment in deployments:
        file, _, name = deployment["entrypoint"].partition(":")
        assert file.startswith("flows/") and (REPO / file).is_file()
        module = importlib.import_module("payflow." + file.removesuffix(".py").replace("/", "."))
        assert isinstance(getattr(module, name), Flow)


def test_parameters_name_real_flow_parameters_and_hold_no_secret():
    for deployment in _deployments():
        file, _, name = deployment["entrypoint"].partition(":")
        module = importlib.import_module("payflow." + file.removesuffix(".py").replace("/", "."))
        accepted = getattr(module, name).parameters.properties
        for key, value in deployment.get("parameters", {}).items():
            assert key in accepted
            assert "token" not in key.lower() and "TOKEN" not in str(value)


def test_the_daily_run_is_scheduled_and_never_overlaps():
    daily = next(d for d in _deployments() if d["name"] == "daily-payouts")
    assert daily["schedules"][0]["cron"]
    assert daily["schedules"][0]["timezone"]
    assert daily["concurrency_limit"] == 1


def test_every_deployment_has_a_work_pool_and_pay_runs_are_not_limited():
    # `prefect --no-prompt deploy --all` needs a pool for each; a paused pay run must not hold a
    # slot that other batches (or other runs of the same batch) wait for.
    by_name = {d["name"]: d for d in _deployments()}
    assert all(d.get("work_pool", {}).get("name") for d in by_name.values())
    assert "concurrency_limit" not in by_name["pay-batch"]


def test_reconciliation_keeps_checking_every_30_minutes_and_daily():
    by_name = {d["name"]: d for d in _deployments()}
    assert by_name["reconcile-pending"]["schedules"][0]["interval"] == 1800
    assert by_name["reconcile-recent"]["schedules"][0]["cron"]
    assert by_name["reconcile-recent"]["parameters"]["days"] == 30


def test_every_deployment_that_registers_a_batch_names_its_maker_maker():
    # `one-batch` and `refunds` called it made_by while daily-payouts and rerun-failed call it
    # maker: an operator who set maker on them had the run fail at Prefect's parameter check.
    for deployment in _deployments():
        if deployment["name"] not in ("daily-payouts", "one-batch", "rerun-failed", "refunds"):
            continue
        file, _, name = deployment["entrypoint"].partition(":")
        module = importlib.import_module("payflow." + file.removesuffix(".py").replace("/", "."))
        flow = getattr(module, name)
        accepted = flow.parameters.properties
        assert "maker" in accepted and "made_by" not in accepted, deployment["name"]
        required = {key: "x" for key in flow.parameters.required}
        assert flow.validate_parameters({**required, "maker": "mia"})["maker"] == "mia"
        # A run started with the old name fails before its body, having read nothing.
        with pytest.raises(SignatureMismatchError, match="made_by"):
            flow.validate_parameters({**required, "made_by": "mia"})


def test_the_watchdog_looks_every_few_minutes_one_run_at_a_time():
    [watchdog] = [d for d in _deployments() if d["name"] == "watchdog"]
    [every] = watchdog["schedules"]
    assert every["interval"] <= 300 and watchdog["concurrency_limit"] == 1
