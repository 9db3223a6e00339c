"""Fixtures of the flow tests: the paying tests' helpers and sandbox."""

from __future__ import annotations

import sys
from pathlib import Path

# The helpers live beside the paying tests; put them on the path even when only this folder runs.
sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "paying"))

from paying_fixtures import sandbox

__all__ = ["sandbox"]
