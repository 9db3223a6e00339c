"""What a run shows in Prefect (its artifacts and progress bars) is best effort: a Prefect server
that is down costs one warning line, never the run.

Measured (issue 38, item 5): a server stopped for a minute under a paying run, and the run's
next `update_progress_artifact` retried for the whole minute, sending nothing, then raised
`ConnectError` and failed the run with a full traceback, its rows left to the watchdog. The
payouts, their states and the heartbeat live in the ledger; Prefect's view of them can wait.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TypeVar, cast
from uuid import UUID

T = TypeVar("T")

logger = logging.getLogger(__name__)


def shown(what: str, call: Callable[[], T]) -> T | None:
    """`call()` (an artifact written to Prefect); None, after one warning line, when it fails."""
    try:
        return call()
    except Exception as exc:
        _warn(f"{what} not shown in Prefect ({_one_line(exc)}); the run goes on")
        return None


class Progress:
    """A progress artifact that gives up after its first failure: every later update would wait
    out the Prefect client's retries again, holding up the payouts behind it."""

    def __init__(self, description: str) -> None:
        from prefect.artifacts import create_progress_artifact

        self._description = description
        # Called from a sync flow: the synchronous variant runs and returns the artifact's id.
        made = shown(
            f"progress '{description}'",
            lambda: create_progress_artifact(0.0, description=description),
        )
        self._id: UUID | None = cast(UUID, made) if made is not None else None

    def update(self, percent: float) -> None:
        """Show `percent`; nothing once an update failed (said once)."""
        from prefect.artifacts import update_progress_artifact

        artifact = self._id
        if artifact is None:
            return
        done = shown(
            f"progress '{self._description}'",
            # Forced synchronous: tracking calls it inside a task's event loop.
            lambda: update_progress_artifact(artifact, percent, _sync=True) or True,  # type: ignore[call-arg]
        )
        if done is None:
            self._id = None


def _warn(line: str) -> None:
    """On the run's logger when there is a run (its worker's output), else this module's."""
    from prefect.exceptions import MissingContextError
    from prefect.logging import get_run_logger

    try:
        get_run_logger().warning(line)
    except MissingContextError:
        logger.warning(line)


def _one_line(exc: BaseException) -> str:
    text = str(exc).strip().splitlines()
    return f"{type(exc).__name__}: {text[0][:200]}" if text else type(exc).__name__
