"""Failures an operator acts on (a bad file, a declined batch, rows not all paid): one line in a
worker's log, no traceback.

Prefect logs every exception that ends a task or flow run with its traceback, and once more
("Engine execution exited with unexpected exception") when a deployed run ends Failed. For
these outcomes the run still ends Failed with its message; only the Python noise goes. Any
other exception keeps its traceback.
"""

from __future__ import annotations

import logging

# Prefect's loggers for task and flow runs: the engines log a run's end through them.
RUN_LOGGERS = ("prefect.task_runs", "prefect.flow_runs")
ENGINE_EXIT = "Engine execution exited with unexpected exception"
PREFECT_EXPECTED = frozenset({"FlowPauseTimeout"})


class ExpectedFailure(Exception):
    """Base of the errors whose message is the whole story for the operator."""


class OneLineForExpected(logging.Filter):
    """Drops the traceback of an `ExpectedFailure`, and the engine's "unexpected" repeat of it."""

    def filter(self, record: logging.LogRecord) -> bool:
        exc = record.exc_info[1] if record.exc_info else None
        if not isinstance(exc, ExpectedFailure) and not _expected_of_prefect(exc):
            return True
        if record.getMessage() == ENGINE_EXIT:
            return False  # the run's final state already said it, in one line
        record.exc_info = None
        record.exc_text = None
        return True


def _expected_of_prefect(exc: BaseException | None) -> bool:
    """Prefect's own exceptions for ends payflow expects: an approval pause that timed out
    (the pay run then ends in one line, `NotApproved` or `BatchStopped`). Named, not imported:
    this module stays light."""
    kind = type(exc)
    return kind.__name__ in PREFECT_EXPECTED and kind.__module__.startswith("prefect")


def quiet_expected_failures() -> None:
    """Install the filter on Prefect's run loggers in this process (once)."""
    for name in RUN_LOGGERS:
        logger = logging.getLogger(name)
        if not any(isinstance(f, OneLineForExpected) for f in logger.filters):
            logger.addFilter(OneLineForExpected())
