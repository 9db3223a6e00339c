"""Approval policy and records: how many people must approve a batch, and whether they have.

`approval_requirement` (steps, rules, warnings) -> `record_decision` (append-only, maker !=
checker, bound to the content hash and totals) -> `approval_status`; `approval_form_markdown`
is the pause form's text; `resume_paused_runs` resumes the paused pay flow run of a batch.
"""

from payflow.approvals.form import approval_form_markdown
from payflow.approvals.identity import person_key
from payflow.approvals.policy import ApprovalPolicy, CurrencyRule, PolicyError, load_policy
from payflow.approvals.requirement import (
    ApprovalWarning,
    Requirement,
    UnknownBatch,
    approval_requirement,
)
from payflow.approvals.status import (
    ApprovalRefused,
    ApprovalStatus,
    Approved,
    Decision,
    Declined,
    Expired,
    Pending,
    Void,
    WarningsUnacknowledged,
    approval_status,
    record_decision,
    status_for,
    status_under,
)

__all__ = [
    "ApprovalPolicy",
    "ApprovalRefused",
    "ApprovalStatus",
    "ApprovalWarning",
    "Approved",
    "CurrencyRule",
    "Decision",
    "Declined",
    "Expired",
    "Pending",
    "PolicyError",
    "Requirement",
    "UnknownBatch",
    "Void",
    "WarningsUnacknowledged",
    "approval_form_markdown",
    "approval_requirement",
    "approval_status",
    "load_policy",
    "person_key",
    "record_decision",
    "status_for",
    "status_under",
]
