"""Turning the chosen rows into new attempts and registering them as a rerun batch."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

from payflow.ledger import AttemptsOutcome, Ledger, NewAttempt
from payflow.model import PayoutInstruction
from payflow.rerun.candidates import Candidate, RerunRefused
from payflow.rerun.corrections import Correction, Validate, apply_corrections
from payflow.rerun.ids import attempt_external_id, rerun_batch_id


def plan_attempts(
    ledger: Ledger,
    chosen: Sequence[Candidate],
    corrections: Mapping[str, Correction],
    validate: Validate | None,
) -> list[NewAttempt]:
    """The next attempt of each chosen row: the parent's instruction, corrected, new id."""
    instructions: dict[str, PayoutInstruction] = {}
    for candidate in chosen:
        stored = ledger.payout_instruction(candidate.external_id)
        if stored is None:
            raise RerunRefused(f"payout {candidate.external_id!r} vanished from the ledger")
        instructions[candidate.root_external_id] = stored._replace(row_number=candidate.row_number)
    if corrections:
        if validate is None:
            raise RerunRefused("corrections need the batch validation, which is not available")
        aliases = {c.external_id: c.root_external_id for c in chosen}
        instructions = apply_corrections(instructions, corrections, aliases, validate)
    attempts = []
    for candidate in chosen:
        number = candidate.attempt + 1
        new_id = attempt_external_id(candidate.root_external_id, number)
        instruction = instructions[candidate.root_external_id]._replace(
            external_id=new_id,
            row_number=candidate.row_number,
        )
        attempts.append(
            NewAttempt(candidate.external_id, candidate.root_external_id, number, instruction)
        )
    return attempts


def register_rerun(
    ledger: Ledger, batch_id: str, attempts: Sequence[NewAttempt], maker: str | None
) -> AttemptsOutcome:
    """Register the attempts as one rerun batch linked to `batch_id` (same rerun, same id)."""
    rerun_id = rerun_batch_id(batch_id, [a.instruction.external_id for a in attempts])
    return ledger.create_attempts(
        rerun_id,
        rerun_of=batch_id,
        source_name=f"rerun of {batch_id}",
        made_by=maker,
        new=attempts,
    )
