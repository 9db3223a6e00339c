"""The summary as Prefect artifacts: markdown and tables, no personal data (invariant 6).

Artifacts hold figures, kinds and statusMessages only: no requisites, names or tokens.
"""

from __future__ import annotations

from payflow.ledger import UNSENT_WORDS, RowOutcome
from payflow.ledger.totals import Settlement
from payflow.reconcile import DRIFT_CAVEAT
from payflow.reporting.money import money_text
from payflow.reporting.summary import Summary
from payflow.wording import counted


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def summary_markdown(summary: Summary, report_name: str | None = None) -> str:
    """Per-currency counts, rates and the balance roll-forward as markdown."""
    lines = [f"## Reconciliation of batch {summary.batch_id}", ""]
    if summary.sandbox:
        lines += ["Embedded sandbox: no real money moved.", ""]
    lines += [
        "| currency | rows | rejected | refused | duplicate | not sent | sent | paid | paid amount"
        # Rates of the rows in the file: "blocked" alone read like "Recipient account is blocked".
        " | failed | canceled | expired | corrected | pending | stuck | blocked before sending"
        " | failed after sending | stalled |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for c in summary.currencies:
        lines.append(
            f"| {_cell(c.currency)} | {c.in_file} | {c.count(RowOutcome.REJECTED)}"
            f" | {c.count(RowOutcome.REFUSED)} | {c.count(RowOutcome.DUPLICATE)}"
            f" | {c.count(RowOutcome.NOT_SENT)} | {c.sent}"
            f" | {c.paid} | {money_text(c.paid_amount, c.currency)}"
            f" | {c.count(RowOutcome.FAILED)} | {c.count(RowOutcome.CANCELED)}"
            f" | {c.count(RowOutcome.EXPIRED)} | {c.count(RowOutcome.CORRECTED)}"
            f" | {c.pending} | {c.stuck} | {c.blocked_rate:.2%}"
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
            figures = (
                r.expected_available,
                r.end_available,
                r.drift_available,
                r.expected_held,
                r.end_held,
                r.drift_held,
            )
            shown = " | ".join(money_text(figure, r.currency) for figure in figures)
            lines.append(f"| {r.currency} | {shown} |")
        for r in summary.balance:
            if r.other_batches:
                named = ", ".join(
                    f"{_cell(b)} ({money_text(a, r.currency)})" for b, a in r.other_batches
                )
                unexplained = money_text(r.unexplained_available, r.currency)
                lines += [
                    "",
                    f"{r.currency}: other batches of this ledger meanwhile: {named}; "
                    f"unexplained drift: {unexplained}",
                ]
        lines += ["", DRIFT_CAVEAT]
    acknowledged = len(summary.unresolved_findings()) - len(summary.open_findings())
    # An acknowledged finding was read by a person and kept (with their note): not open.
    also = f" ({acknowledged} acknowledged)" if acknowledged else ""
    lines += ["", f"Open findings: {len(summary.open_findings())}{also}"]
    if line := summary.not_rechecked_line():
        lines += ["", line]
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
            "acknowledged": f.acknowledgement or "",
        }
        for f in summary.unresolved_findings()
    ]


def failures_table(summary: Summary) -> list[dict[str, str | int]]:
    """Failed rows grouped by statusMessage, with class and next step."""
    return [
        {
            "currency": g.total.currency,
            "status": g.total.state,
            "statusMessage": g.total.status_message or "(no message)",
            "rows": g.total.rows,
            "amount": money_text(g.total.amount, g.total.currency),
            "class": g.classification.failure_class.value,
            "next step": g.classification.next_step,
        }
        for g in summary.failures
    ]


def settlement_lines(settlement: Settlement, batch_id: str) -> list[str]:
    """What keeps a reconciled batch from done besides its findings (none: no lines)."""
    lines = []
    if settlement.not_final:
        rows = counted(settlement.not_final, "row")
        lines.append(
            f"{rows} not final yet (pending here or at the service, or not sent): "
            f"`payflow reconcile {batch_id}` again once they are"
        )
    if settlement.disagreeing:
        rows = counted(settlement.disagreeing, "row")
        lines.append(
            f"{rows} where the service's word differs from the ledger's state: the report's "
            "outcome follows the service; `payflow findings` lists them"
        )
    return lines
