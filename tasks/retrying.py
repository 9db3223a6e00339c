"""When Prefect may run a read-only task again: for transient API errors only."""

from __future__ import annotations

from typing import Any

from payflow.api.retry import is_retryable_read

READ_RETRIES = 2
READ_RETRY_DELAYS: list[float] = [2.0, 10.0]


def transient_only(task: Any, task_run: Any, state: Any) -> bool:
    """`retry_condition_fn` of read-only tasks: retry a 5xx, 429, timeout or dropped connection;
    never a refused token, a bad request or a bug."""
    try:
        state.result()
    except Exception as exc:
        return is_retryable_read(exc)
    return False
