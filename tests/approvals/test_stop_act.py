"""`payflow stop` as an act (`payflow.acts.stop`): any signed-in operator may stop a batch's runs
(stopping moves no money; before, a checker who saw a wrong batch paying was refused), the
history names them, and a schedule's actor is nobody who may."""

from __future__ import annotations

import asyncio
from datetime import timedelta

import pytest
from paying_support import register, row
from prefect import flow
from prefect.client.orchestration import get_client
from prefect.states import Scheduled
from support.operators import actor, add_people

from payflow.acts import NotAllowed
from payflow.acts.actor import system_actor
from payflow.acts.stop import stop
from payflow.approvals.resume import batch_tag
from payflow.ending import STOPPED
from payflow.ledger.actions import actions_of

A_MINUTE = timedelta(minutes=1)  # the default heartbeat window


@flow(name="stop-act-target")
def _target() -> None:
    """Never run: a scheduled run of it stands for a batch's pay run waiting for a worker."""


def _scheduled_run(batch_id: str) -> str:
    async def create() -> str:
        async with get_client() as client:
            run = await client.create_flow_run(
                _target, tags=[batch_tag(batch_id)], state=Scheduled()
            )
        return run.name

    return asyncio.run(create())


def test_a_checker_stops_a_batchs_run_and_the_history_names_her(prefect_api, ledger) -> None:
    add_people(ledger, mia="maker", bob="checker")
    batch_id = register(ledger, [row("stop-act-2", 2)])
    name = _scheduled_run(batch_id)

    with pytest.raises(NotAllowed, match="only an operator stops"):
        stop(ledger, batch_id, system_actor("deployment daily-payouts"), A_MINUTE)
    assert actions_of(ledger, batch_id) == []

    stopped = stop(ledger, batch_id, actor(ledger, "bob"), A_MINUTE)
    assert list(stopped.runs.values()) == [name]
    assert [(a.actor, a.action, a.detail) for a in actions_of(ledger, batch_id)] == [
        ("bob", STOPPED, name)
    ]
