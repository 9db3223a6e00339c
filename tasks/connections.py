"""Where tasks get their connections: kept as a name for the tasks that import it from here.

The work lives in `payflow.connections` and `payflow.paying.workers`.
"""

from payflow.connections import RunTarget, open_client, open_ledger, with_client
from payflow.paying.workers import new_worker_id, worker_is_dead

__all__ = [
    "RunTarget",
    "new_worker_id",
    "open_client",
    "open_ledger",
    "with_client",
    "worker_is_dead",
]
