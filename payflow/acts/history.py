"""A batch's one history, as the console's batch page, `payflow status` and the pay run's Prefect
artifact show it: the acts' log and the ledger's approval records, whoever made them and
wherever (console, command line, Prefect's form, a deployment's schedule)."""

from __future__ import annotations

from dataclasses import dataclass
from datetime import datetime

from payflow.approvals import person_key
from payflow.ledger import ApprovalRecord, Ledger
from payflow.ledger.actions import actions_of
from payflow.wording import counted

DECIDED = {"approve": "approved", "decline": "declined"}
VIA = {
    "console": "in the console",
    "cli": "on the command line (payflow approve)",
    "prefect": "in the pay run's Prefect form",
}
# What an action reads as where its name alone would mislead.
GO_AHEAD = "go_ahead"  # a checker started paying a batch approved outside the console
# Approved, but no run started or resumed: the batch's run waits elsewhere (detail: why).
PAY_WAITS = "pay_waits"
# A rerun batch made from its batch's failed rows: no file was uploaded.
RERUN_CREATED = "rerun_created"
WHAT = {
    GO_AHEAD: "started paying",
    PAY_WAITS: "payout run not started",
    RERUN_CREATED: "created from failed rows",
}
RERUN_DETAIL = "rerun of "
# Console actions that are also written as approval records: shown once, as the record.
DECISION_ACTIONS = {"approval_step": "approve", "approved": "approve", "declined": "decline"}


@dataclass(frozen=True, slots=True)
class HistoryLine:
    """One line of the history table."""

    at: datetime
    actor: str
    what: str
    detail: str


def _record_line(record: ApprovalRecord) -> HistoryLine:
    parts = [VIA.get(record.via, f"via {record.via}")]
    # A decline keeps the warnings it saw too, but nobody was asked to acknowledge them.
    if record.acknowledged and record.decision == "approve":
        parts.append(f"acknowledged {counted(len(record.acknowledged), 'warning')}")
    if record.note:
        parts.append(f"note: {record.note}")
    what = DECIDED.get(record.decision, record.decision)
    return HistoryLine(record.at, record.approver, what, "; ".join(parts))


def batch_history(ledger: Ledger, batch_id: str) -> list[HistoryLine]:
    """Console actions and approval records of the batch, oldest first."""
    records = ledger.approvals_of(batch_id)
    lines = [_record_line(r) for r in records]
    # Each decision's act writes a record and a line of the action log: shown once, as the record.
    recorded = {(person_key(r.approver), r.decision) for r in records}
    for action in actions_of(ledger, batch_id):
        decision = DECISION_ACTIONS.get(action.action)
        if decision is not None and (person_key(action.actor), decision) in recorded:
            continue
        name = action.action
        if name == "uploaded" and (action.detail or "").startswith(RERUN_DETAIL):
            name = RERUN_CREATED  # as a ledger from before RERUN_CREATED recorded a rerun
        what = WHAT.get(name) or name.replace("_", " ")
        lines.append(HistoryLine(action.at, action.actor, what, action.detail or ""))
    return sorted(lines, key=lambda line: line.at)


def history_text(line: HistoryLine) -> str:
    """`2026-11-29 09:40 UTC  ada  approved  in the console`: one line of the history."""
    detail = f"  {line.detail}" if line.detail else ""
    return f"{line.at:%Y-%m-%d %H:%M:%S} UTC  {line.actor}  {line.what}{detail}"


def history_json(line: HistoryLine) -> dict[str, str]:
    """One line of the history for `--json`."""
    return {"at": line.at.isoformat(), "by": line.actor, "what": line.what, "detail": line.detail}


def history_markdown(lines: list[HistoryLine]) -> str:
    """The history as a Markdown table (a Prefect artifact)."""
    rows = ["| when (UTC) | who | what | detail |", "|---|---|---|---|"]
    for line in lines:
        cells = (f"{line.at:%Y-%m-%d %H:%M:%S}", line.actor, line.what, line.detail)
        rows.append("| " + " | ".join(_cell(cell) for cell in cells) + " |")
    return "\n".join(rows)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")
