"""Failure classes for reruns: the same table the reconciliation report reads.

`payflow/defaults/failure_classes.csv` (or `PAYFLOW_FAILURE_CLASSES_PATH`) is the one home of
"what kind of failure is this and what next"; the rerun preview, the console and the report
must give a failed row the same class and next step, so reruns only adapt its answers.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from pathlib import Path

from payflow.reconcile.classes import FailureClass, FailureClasses

__all__ = ["FAILURE_CLASSES", "Classifier", "FailureClass", "classifier"]

FAILURE_CLASSES: tuple[str, ...] = tuple(c.value for c in FailureClass)

Classifier = Callable[[str, str | None], tuple[FailureClass, str]]


@cache
def _table(path: Path | None) -> FailureClasses:
    return FailureClasses.load(path)


def classifier(path: Path | None = None) -> Classifier:
    """Class and next step of a failed row from the table at `path` (the default table if None);
    raises FailureTableError naming the bad line."""
    table = _table(path)

    def classify(status: str, status_message: str | None) -> tuple[FailureClass, str]:
        found = table.classify(status, status_message)
        return found.failure_class, found.next_step

    return classify
