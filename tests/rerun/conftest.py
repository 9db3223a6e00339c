"""Fixtures of the rerun tests: the paying tests' sandbox, ledger and PostgreSQL fixtures."""

from __future__ import annotations

import sys
from pathlib import Path

# The helpers live beside the paying tests; put them on the path even when only this folder runs.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "paying"))
sys.path.insert(0, str(Path(__file__).resolve().parent))

from paying_fixtures import ledger, ledger_url, postgres_url, sandbox

__all__ = ["ledger", "ledger_url", "postgres_url", "sandbox"]
