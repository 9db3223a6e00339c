"""One Prefect server per test process for the CLI tests (see `cli_support.payflow_env`).

A `payflow run` with no PREFECT_API_URL starts Prefect's temporary server, about 12 s of CPU
each time; the CLI tests run dozens of them. Most now share one server, as an operator with a
warm server would (docs/performance.md); the tests about the temporary server itself (the quiet
sample run, signals) ask for it with `temporary_prefect=True`.
"""

from support.shared_prefect import shared_prefect_server

__all__ = ["shared_prefect_server"]
