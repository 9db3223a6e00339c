"""Rerunning reviewed failed rows as new attempts linked to their parent and root.

`find_candidates` -> `choose` (or `preview_lines`) -> `refetch_parents` -> `plan_attempts`
-> `register_rerun`; the rerun batch is then paid by the ordinary submit and track code.
"""

from payflow.rerun.candidates import (
    Candidate,
    Candidates,
    Ineligible,
    RerunRefused,
    find_candidates,
)
from payflow.rerun.classify import FAILURE_CLASSES, Classifier, FailureClass, classifier
from payflow.rerun.corrections import Correction, Validate, apply_corrections, read_corrections
from payflow.rerun.ids import attempt_external_id, rerun_batch_id
from payflow.rerun.plan import plan_attempts, register_rerun
from payflow.rerun.preview import (
    correction_lines,
    group_candidates,
    group_lines,
    preview_lines,
)
from payflow.rerun.refetch import Dropped, refetch_parents
from payflow.rerun.selection import (
    CHOOSE_ROWS,
    CLI_WORDS,
    DEPLOYMENT_WORDS,
    ChoiceWords,
    Selection,
    choose,
    parse_rows,
    parse_selection,
)

__all__ = [
    "CHOOSE_ROWS",
    "CLI_WORDS",
    "DEPLOYMENT_WORDS",
    "FAILURE_CLASSES",
    "Candidate",
    "Candidates",
    "ChoiceWords",
    "Classifier",
    "Correction",
    "Dropped",
    "FailureClass",
    "Ineligible",
    "RerunRefused",
    "Selection",
    "Validate",
    "apply_corrections",
    "attempt_external_id",
    "choose",
    "classifier",
    "correction_lines",
    "find_candidates",
    "group_candidates",
    "group_lines",
    "parse_rows",
    "parse_selection",
    "plan_attempts",
    "preview_lines",
    "read_corrections",
    "refetch_parents",
    "register_rerun",
    "rerun_batch_id",
]
