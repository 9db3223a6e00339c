"""Fixtures of the refund tests: the paying tests' sandbox and ledger fixtures (real HTTP, a real
ledger file)."""

from __future__ import annotations

import sys
from pathlib import Path

# The helpers live beside the paying tests; put them on the path even when only this folder runs.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "paying"))

from paying_fixtures import ledger, ledger_url, sandbox

__all__ = ["ledger", "ledger_url", "sandbox"]
