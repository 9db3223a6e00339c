"""The tests' quiet period: how long their pay runs wait after a payout's last news before
polling it (`PAYFLOW_TRACK_QUIET_PERIOD`, 5 s by default).

A test sandbox (`support.sandbox`, and the `payflow sandbox` of the deployment tests) finishes a
payout in well under a second and sends no webhook unless a test gives it a receiver, so the
default made every pay run sit 5 s idle before its first poll. At 1 s the first poll still
finds the payout final (in `support.sandbox` a 6666 payout's correction too, 0.4 s after it
completed), and the embedded sandbox's webhooks (within its 0.7 s of delays) still come before
any poll of `payflow run` in the command-line tests.

Given to in-process pay runs by tests/conftest.py (their flows read `Settings()` from the
environment), to the command line by `cli.cli_support.payflow_env`, and to the deployment tests'
workers in their environments. Tests about tracking's patience call `track_batch` or build
`Settings` with their own value, which this does not reach.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:  # imported by tests/conftest.py: the engine loads only where it is used
    from payflow.api import AsyncPayoutsClient
    from payflow.ledger import Ledger

TRACK_QUIET_PERIOD = "1"


async def send_and_follow(
    client: AsyncPayoutsClient, ledger: Ledger, batch_id: str, worker_id: str
) -> None:
    """Pay the batch's rows in this process through the engine (`submit_batch`, then
    `track_batch` with short waits): a test's set-up of a paid or failed batch."""
    from payflow.paying import submit_batch, track_batch

    await submit_batch(
        client, ledger, batch_id, worker_id=worker_id, chunk_size=50, callback_url=None
    )
    await track_batch(
        client,
        ledger,
        batch_id,
        deadline=3.0,
        poll_interval=0.05,
        poll_max_interval=0.2,
        quiet_period=0.1,
    )
