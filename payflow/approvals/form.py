"""The text of the approval form (Prefect's resume form and the pay run's artifact), in markdown.

`payflow approve` does not print it: its answer lines ("answer with `approve`...") are for
Prefect's form, and an operator who had just answered read them as a question still open.
"""

from __future__ import annotations

from payflow.approvals.requirement import Requirement
from payflow.approvals.status import ApprovalStatus, Approved, Pending, Void
from payflow.schemas.iso4217 import amount_text
from payflow.wording import counted


def approval_form_markdown(requirement: Requirement, status: ApprovalStatus) -> str:
    """Totals, the rule that applies, rows needing their own approval, warnings, the hash."""
    facts = requirement.facts
    lines = [
        f"## Batch {facts.batch_id} waits for approval",
        "",
        counted(facts.rows, "payout")
        + (f", a rerun of batch {facts.rerun_of}" if facts.rerun_of else ""),
        f"made by {facts.made_by or 'unknown'}; "
        f"expires {requirement.expires_at:%Y-%m-%d %H:%M} UTC",
        "",
        "| currency | total |",
        "|---|---|",
        *(f"| {c} | {amount_text(a, c)} |" for c, a in sorted(facts.totals.items())),
        "",
        *((f"**{line}.**", "") if (line := requirement.to_send_line()) else ()),
        f"**Rule:** {counted(requirement.steps, 'approval step')} needed.",
        *(f"- {rule}" for rule in requirement.rules),
    ]
    if requirement.earlier:
        lines += ["", "**Rows sent again (why each earlier attempt failed):**"]
        lines += [f"- {row.text}: {row.next_step}" for row in requirement.earlier]
    if requirement.large_rows:
        lines += ["", "**Rows needing their own approval:**"]
        lines += [f"- {w.text}" for w in requirement.large_rows]
    if requirement.warnings:
        lines += ["", "**Warnings (approving acknowledges them):**"]
        lines += [f"- {w.text}" for w in requirement.warnings]
    if requirement.notes:
        lines += ["", "**Notes from intake (the maker saw these at upload):**"]
        lines += [f"- {note}" for note in requirement.notes]
    if requirement.held:
        lines += ["", "**Held as repeats (not paid, not covered by this approval):**"]
        lines += [f"- {w.text}" for w in requirement.held]
        lines.append(
            "The maker releases them with `payflow run FILE --allow-repeat`; "
            "then the batch needs approving again."
        )
    if isinstance(status, Pending | Void):
        lines += ["", f"Steps left: {status.steps_left}."]
    if isinstance(status, Void):
        lines.append("Earlier approvals were for other content and no longer count.")
    if isinstance(status, Approved) and status.by:
        lines += ["", f"Approved by {', '.join(status.by)}."]
    lines += [
        "",
        f"Content hash `{facts.content_hash[:16]}`: any change to the batch voids an approval.",
        "Answer with `approve` switched on to pay and your one-time `approval_code`"
        + (" and `acknowledge_warnings`;" if requirement.warnings else ";")
        + " to decline, leave `approve` off and write why in `decline_reason`.",
        f"Get the code with `payflow approve {facts.batch_id} --code` (signed in as a checker) "
        "or in the console; an answer without one counts for nothing. Or approve there, or with "
        f"`payflow approve {facts.batch_id}`. The maker cannot approve, and each step needs "
        "another person.",
        f"Held to approval policy version {requirement.policy_version}.",
    ]
    return "\n".join(lines)


def with_refused_answer(form: str, refused: str | None) -> str:
    """The form asked again after an answer that was not recorded, saying why under its title.

    Prefect's form came back unchanged after the maker (or a name that already approved)
    answered, and the person at the form could not tell their answer from no answer."""
    if not refused:
        return form
    title, _, rest = form.partition("\n")
    # A refusal may end with a sentence's period of its own (a warning's text does).
    why = refused.rstrip().rstrip(".")
    return f"{title}\n\n**The last answer was not recorded:** {why}. Answer again.\n{rest}"
