"""Fixtures of the paying tests (defined in paying_fixtures, shared with tests/webhooks)."""

from __future__ import annotations

from paying_fixtures import client, ledger, ledger_url, postgres_url, sandbox

__all__ = ["client", "ledger", "ledger_url", "postgres_url", "sandbox"]
