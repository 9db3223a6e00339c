"""The watchdog: dead pay runs found and resumed once, or an open finding; see `watch.py`."""

from __future__ import annotations

from payflow.ledger import Ledger
from payflow.notify import send
from payflow.paying.workers import new_worker_id
from payflow.settings import Settings
from payflow.watchdog.answers import record_form_answer
from payflow.watchdog.watch import Verdict, Watched, watch_once

__all__ = ["Verdict", "Watched", "run_watchdog"]


def run_watchdog(settings: Settings, ledger: Ledger, *, with_prefect: bool) -> list[Watched]:
    """One look at every batch with unfinished rows, with the ledger's policy and the settings'
    deployment and notifications; `with_prefect` False: no Prefect server to read or start
    runs on."""
    runs = None
    if with_prefect:
        from payflow.watchdog.prefect_runs import PrefectRuns  # Prefect's client: only here

        runs = PrefectRuns(ledger, settings.watchdog_deployment, settings.run_stale_window)
    return watch_once(
        ledger,
        runs,
        holder=new_worker_id(),
        record_answer=record_form_answer,
        tell=lambda notice: send(settings, notice),
        stale_after=settings.run_stale_window,
    )
