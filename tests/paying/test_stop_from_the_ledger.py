"""`payflow stop` reaches a pay run through the ledger (issue 38, item 5): Prefect's cancellation
reaches a run only through its worker's cancellation observer, which gives up for good after a
Prefect server outage ("Cancellation observer failed. Flow run cancellation disabled"), and a run
with no worker (this one, in-process) never hears it at all. The run reads the stop before each
chunk, sends nothing more, and ends Cancelled in one line; every row stays in the ledger."""

from __future__ import annotations

import threading
import time
from datetime import timedelta

from paying_support import pay_state, register, rows, states
from prefect.settings import PREFECT_API_URL, PREFECT_CLIENT_MAX_RETRIES, temporary_settings
from support.servers import free_port
from support.stats import sandbox_stats, set_faults

from payflow.ending import STOPPED
from payflow.ledger.actions import actions_of, record_action
from payflow.ledger.run_beats import beat
from payflow.paying.stop import stop_batch
from payflow.stopping import StoppedByOperator


def test_a_stop_recorded_in_the_ledger_ends_the_run_before_its_next_chunk(
    prefect_api, sandbox, ledger, tmp_path
):
    batch_id = register(ledger, rows("st", 12))
    set_faults(sandbox, latency=0.4)  # each payout takes a while: the stop lands mid-batch
    ended = {}

    def pay() -> None:
        ended["state"] = pay_state(
            sandbox, ledger, batch_id, tmp_path / "reports", chunk_size=1, max_in_flight=1
        )

    run = threading.Thread(target=pay, daemon=True)
    run.start()
    deadline = time.monotonic() + 120
    while not sandbox_stats(sandbox.url)["payoutsByExternalId"]:
        assert run.is_alive() and time.monotonic() < deadline, "the run sent nothing"
        time.sleep(0.1)

    # What `payflow stop` records when Prefect cannot be reached (or its cancellation is
    # disabled): only the ledger tells the run.
    record_action(ledger, "mia", STOPPED, batch_id, "recorded in the ledger only")
    run.join(timeout=120)

    state = ended["state"]
    assert state.is_cancelled() and state.name == "Stopped"
    sent = sandbox_stats(sandbox.url)["payoutsByExternalId"]
    unsent = [e for e, s in states(ledger, batch_id).items() if s == "VALIDATED"]
    assert 0 < len(sent) < 12 and len(unsent) == 12 - len(sent)  # nothing sent after the stop
    assert set(sent.values()) == {1}
    assert state.message == (
        f"batch {batch_id}: stopped by mia (payflow stop): nothing more is sent; "
        f"{len(unsent)} rows not sent, every row in the ledger: payflow pay {batch_id} goes on"
    )
    assert isinstance(state.result(raise_on_failure=False), StoppedByOperator)


def test_with_prefect_down_payflow_stop_records_the_stop_for_a_run_that_beats(ledger):
    batch_id = register(ledger, rows("sd", 2))
    beat(ledger, "worker-7.example:1:cafe", batch_id, "flow run paying")  # alive elsewhere
    down = f"http://127.0.0.1:{free_port()}/api"  # nobody listens there

    with temporary_settings(updates={PREFECT_API_URL: down, PREFECT_CLIENT_MAX_RETRIES: 0}):
        stopped = stop_batch(ledger, batch_id, "mia", timedelta(minutes=1))

    assert stopped.recorded and stopped.prefect_trouble is not None
    assert stopped.line(batch_id).startswith(f"batch {batch_id}: Prefect could not be reached (")
    assert stopped.line(batch_id).endswith(
        "); the stop is recorded in the ledger, where 1 pay run of it beating reads it and "
        f"stops sending before the next chunk; every row stays in the ledger: `payflow status "
        f"{batch_id}` shows them, `payflow pay {batch_id}` goes on"
    )
    [stop] = [a for a in actions_of(ledger, batch_id) if a.action == STOPPED]
    assert stop.actor == "mia"
