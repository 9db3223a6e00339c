"""The end of a pay run someone started, written to the action log by the run itself.

A run started through a Prefect deployment executes in a worker the console cannot watch, so
the flow records its own end (finished, failed, crashed or cancelled) when the `started_by`
parameter names who started it. Figures in the line are read from the ledger at that moment.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from payflow.ledger import Ledger
from payflow.ledger.actions import record_action
from payflow.progress_line import progress_text
from payflow.settings import Settings

FINISHED = "pay_finished"
FAILED = "pay_failed"
# The name of the Failed state a pay run ends in when it ran to its end but some row is not
# COMPLETED (failed, pending, held, rejected): red in Prefect, like `payflow run`'s exit 1, and
# not a run that stopped (the inbox does not replace it, the console reads it as finished).
NOT_ALL_PAID = "Not all paid"
# Every row paid, but the report could not be written (a full disk): red too, as the exit 1.
REPORT_NOT_WRITTEN = "Report not written"


def ran_to_its_end(state: Any) -> bool:
    """True when the pay run's final state is Completed, `NOT_ALL_PAID` or `REPORT_NOT_WRITTEN`."""
    ended = (NOT_ALL_PAID, REPORT_NOT_WRITTEN)
    return bool(state.is_completed() or (state.is_failed() and state.name in ended))


def record_pay_run_end(flow: Any, flow_run: Any, state: Any) -> None:
    """Prefect state hook: append pay_finished or pay_failed for the run's batch and starter."""
    parameters: Mapping[str, Any] = flow_run.parameters or {}
    actor, batch_id = parameters.get("started_by"), parameters.get("batch_id")
    if not actor or not batch_id:
        return
    ledger_url = parameters.get("ledger_url") or Settings().ledger_url_or_default()
    ledger = Ledger.open(ledger_url)
    try:
        counts = ledger.batch_counts(str(batch_id))
        figures = progress_text(str(batch_id), counts.by_state).split(": ", 1)[-1]
        if ran_to_its_end(state):
            unpaid = "" if counts.all_completed else f"; {counts.unpaid_line()}"
            detail = f"run {flow_run.name}: {figures}{unpaid}"
            record_action(ledger, str(actor), FINISHED, str(batch_id), detail)
        else:
            reason = _first_line(state.message) or state.name
            record_action(
                ledger,
                str(actor),
                FAILED,
                str(batch_id),
                f"run {flow_run.name} {state.name.lower()}: {reason}; {figures}",
            )
    finally:
        ledger.close()


def _first_line(text: str | None) -> str:
    lines = (text or "").strip().splitlines()
    return lines[0][:300] if lines else ""
