"""Helpers every test folder shares: the sandbox factory, its stats, throwaway PostgreSQL
databases, Prefect's test harness.

`tests/` is on sys.path (the root conftest's folder), so tests import `support.sandbox`,
`support.stats`, `support.postgres` and `support.prefect`.
"""
