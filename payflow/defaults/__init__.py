"""The tables payflow ships as package data: the defaults an operator's own copy can replace.

`destination_rules.csv` (schemas), `failure_classes.csv` (reconciliation, or
PAYFLOW_FAILURE_CLASSES_PATH) and `approvals.yaml` (the approval policy a new ledger records as
its version 1) are read through `importlib.resources`, so an installed wheel finds them wherever
it lives.
"""

from __future__ import annotations

from importlib import resources
from importlib.resources.abc import Traversable

DESTINATION_RULES = "destination_rules.csv"
FAILURE_CLASSES = "failure_classes.csv"
APPROVALS = "approvals.yaml"


def default_file(name: str) -> Traversable:
    """One shipped table, read with `.open()` or `.read_text()` (a file inside the package)."""
    return resources.files(__name__).joinpath(name)
