"""What became of each submitted row, counted for the flow and the operator."""

from __future__ import annotations

from dataclasses import dataclass, field
from enum import StrEnum


class Outcome(StrEnum):
    """The end of the submit protocol for one row in one run."""

    CREATED = "created"  # the POST answered with a payout
    ADOPTED = "adopted"  # found by externalId after an ambiguous outcome or a crash
    REJECTED = "rejected"  # a 4xx: final, SUBMIT_REJECTED with the service's message
    CONFLICT = "conflict"  # the externalId exists with other content: never paid
    DEFERRED = "deferred"  # out of attempts, provably not created: back in the queue
    UNRESOLVED = "unresolved"  # the lookup kept failing: stays SUBMITTING for the next run
    NOT_FOUND = "not_found"  # internal: the lookup found nothing, a POST is safe


@dataclass(slots=True)
class SubmitStats:
    """Counts per outcome, plus the externalIds the next run must pick up again."""

    created: int = 0
    adopted: int = 0
    rejected: int = 0
    conflicts: int = 0
    deferred: int = 0
    unresolved: int = 0
    left_for_next_run: list[str] = field(default_factory=list)

    @property
    def submitted(self) -> int:
        """Rows that now have exactly one payout at the service."""
        return self.created + self.adopted

    @property
    def total(self) -> int:
        """Rows this run settled or handed back."""
        return (
            self.created
            + self.adopted
            + self.rejected
            + self.conflicts
            + self.deferred
            + self.unresolved
        )

    def add(self, outcome: Outcome, external_id: str) -> None:
        """Count one row's outcome."""
        if outcome is Outcome.CREATED:
            self.created += 1
        elif outcome is Outcome.ADOPTED:
            self.adopted += 1
        elif outcome is Outcome.REJECTED:
            self.rejected += 1
        elif outcome is Outcome.CONFLICT:
            self.conflicts += 1
        elif outcome is Outcome.DEFERRED:
            self.deferred += 1
            self.left_for_next_run.append(external_id)
        else:
            self.unresolved += 1
            self.left_for_next_run.append(external_id)

    def merge(self, other: SubmitStats) -> SubmitStats:
        """Add another chunk's counts into this one and return self."""
        self.created += other.created
        self.adopted += other.adopted
        self.rejected += other.rejected
        self.conflicts += other.conflicts
        self.deferred += other.deferred
        self.unresolved += other.unresolved
        self.left_for_next_run.extend(other.left_for_next_run)
        return self
