"""The summary as Prefect artifacts: markdown and tables, no personal data (invariant 6).

Artifacts hold figures, kinds and statusMessages only: no requisites, names or tokens.
"""

from __future__ import annotations

from decimal import Decimal

from payflow.ledger import UNSENT_WORDS, RowOutcome
from payflow.model import canonical_amount
from payflow.reconcile import DRIFT_CAVEAT
from payflow.reporting.summary import Summary


def _amount(value: Decimal | None) -> str:
    return "" if value is None else canonical_amount(value)


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_markdown(summary: Summary, report_name: str | None = None) -> str:
    """Per-currency counts, rates and the balance roll-forward as markdown."""
    lines = [f"## Reconciliation of batch {summary.batch_id}", ""]
    if summary.sandbox:
        lines += ["Embedded sandbox: no real money moved.", ""]
    lines += [
        "| currency | rows | rejected | refused | duplicate | not sent | sent | paid | paid amount"
        " | failed | canceled | expired | corrected | pending | stuck | blocked"
        " | failed after sending | stalled |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in summary.currencies:
        lines.append(
            f"| {_cell(c.currency)} | {c.in_file} | {c.count(RowOutcome.REJECTED)}"
            f" | {c.count(RowOutcome.REFUSED)} | {c.count(RowOutcome.DUPLICATE)}"
            f" | {c.count(RowOutcome.NOT_SENT)} | {c.sent}"
            f" | {c.count(RowOutcome.PAID)} | {_amount(c.amount(RowOutcome.PAID))}"
            f" | {c.count(RowOutcome.FAILED)} | {c.count(RowOutcome.CANCELED)}"
            f" | {c.count(RowOutcome.EXPIRED)} | {c.count(RowOutcome.CORRECTED)}"
            f" | {c.count(RowOutcome.PENDING)} | {c.stuck} | {c.blocked_rate:.2%}"
            f" | {c.failed_rate:.2%} | {c.stalled_rate:.2%} |"
        )
    if summary.unsent:
        lines += [
            "",
            "### Rows never sent, by reason",
            "",
            "| currency | rows | why |",
            "|---|---|---|",
        ]
        lines += [
            f"| {_cell(t.currency)} | {t.rows} | {_cell(UNSENT_WORDS[t.reason])} |"
            for t in summary.unsent
        ]
    if summary.balance:
        lines += [
            "",
            "### Balance roll-forward",
            "",
            "| currency | expected available | actual available | drift | expected held"
            " | actual held | drift held |",
            "|---|---|---|---|---|---|---|",
        ]
        for r in summary.balance:
            lines.append(
                f"| {r.currency} | {_amount(r.expected_available)} | {_amount(r.end_available)}"
                f" | {_amount(r.drift_available)} | {_amount(r.expected_held)}"
                f" | {_amount(r.end_held)} | {_amount(r.drift_held)} |"
            )
        lines += ["", DRIFT_CAVEAT]
    lines += ["", f"Open findings: {len(summary.open_findings())}"]
    if report_name:
        lines += ["", f"Full report: `{report_name}`"]
    return "\n".join(lines)


def findings_table(summary: Summary) -> list[dict[str, str | int]]:
    """Open and acknowledged findings as rows of a table artifact."""
    return [
        {
            "id": f.id,
            "row": f.row_number,
            "kind": f.kind,
            "state": f.state,
            "detail": f.detail,
        }
        for f in summary.open_findings()
    ]


def failures_table(summary: Summary) -> list[dict[str, str | int]]:
    """Failed rows grouped by statusMessage, with class and next step."""
    return [
        {
            "currency": g.total.currency,
            "status": g.total.state,
            "statusMessage": g.total.status_message or "(no message)",
            "rows": g.total.rows,
            "amount": canonical_amount(g.total.amount),
            "class": g.classification.failure_class.value,
            "next step": g.classification.next_step,
        }
        for g in summary.failures
    ]
