"""The failure classification table: statusMessage patterns and statuses -> class and next step.

The table is data (`payflow/defaults/failure_classes.csv`, or `PAYFLOW_FAILURE_CLASSES_PATH`)
so an operator can edit it like the destination rules. The first line whose status matches
(`*` matches any) and whose pattern (a case-insensitive regular expression; empty matches
anything) is found in the statusMessage wins.
"""

from __future__ import annotations

import csv
import io
import re
from dataclasses import dataclass
from enum import StrEnum
from importlib.resources.abc import Traversable
from pathlib import Path

from payflow.defaults import FAILURE_CLASSES, default_file

COLUMNS = ("status", "message_pattern", "class", "next_step")


class FailureClass(StrEnum):
    """What can be done about a failed row."""

    RETRYABLE = "retryable"
    FIX_DETAILS = "fix_details"
    DO_NOT_RETRY = "do_not_retry"
    UNKNOWN = "unknown"


class FailureTableError(ValueError):
    """The classification table cannot be read; the message names the line."""


@dataclass(frozen=True, slots=True)
class Classification:
    """The class of one failure and the plain next step for the operator."""

    failure_class: FailureClass
    next_step: str


@dataclass(frozen=True, slots=True)
class _Rule:
    status: str
    pattern: re.Pattern[str] | None
    classification: Classification


UNCLASSIFIED = Classification(FailureClass.UNKNOWN, "Read the statusMessage and decide by hand.")


class FailureClasses:
    """The loaded table; `classify` answers for one row."""

    def __init__(self, rules: list[_Rule]) -> None:
        self._rules = rules

    @classmethod
    def load(cls, path: Path | None = None) -> FailureClasses:
        """Read the CSV table; a bad line raises FailureTableError naming it."""
        source: Traversable = path or default_file(FAILURE_CLASSES)
        try:
            text = source.read_bytes().decode("utf-8")
        except OSError as exc:
            raise FailureTableError(f"{source}: {exc.strerror}") from None
        reader = csv.DictReader(io.StringIO(text, newline=""))
        if tuple(reader.fieldnames or ()) != COLUMNS:
            raise FailureTableError(f"{source}: the header must be {','.join(COLUMNS)}")
        return cls([_rule(source, n, line) for n, line in enumerate(reader, start=2)])

    def classify(self, status: str, message: str | None) -> Classification:
        """The first matching line's class and next step, or `unknown`."""
        text = message or ""
        for rule in self._rules:
            if rule.status not in ("*", status.upper()):
                continue
            if rule.pattern is None or rule.pattern.search(text):
                return rule.classification
        return UNCLASSIFIED


def _rule(source: Traversable, number: int, line: dict[str, str]) -> _Rule:
    try:
        failure_class = FailureClass(line["class"].strip())
    except ValueError:
        choices = ", ".join(c.value for c in FailureClass)
        raise FailureTableError(f"{source} line {number}: class must be one of {choices}") from None
    pattern_text = line["message_pattern"].strip()
    try:
        pattern = re.compile(pattern_text, re.IGNORECASE) if pattern_text else None
    except re.error as exc:
        raise FailureTableError(f"{source} line {number}: bad pattern ({exc})") from None
    step = line["next_step"].strip()
    if not step:
        raise FailureTableError(f"{source} line {number}: next_step is empty")
    return _Rule(line["status"].strip().upper(), pattern, Classification(failure_class, step))
