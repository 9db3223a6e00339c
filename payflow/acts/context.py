"""The signed-in actor of a command that runs a flow in its own process (`payflow rerun`): the
flow submits the batch it registers as theirs. A deployed run has none (a flow parameter could
be set by anyone who starts a run, so no parameter ever names an authenticated person)."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar

from payflow.acts.actor import Actor

_ACTING: ContextVar[Actor | None] = ContextVar("payflow_acting", default=None)


@contextmanager
def acting_as(actor: Actor) -> Iterator[None]:
    """Within the block, flows run in this process register batches as `actor`'s."""
    token = _ACTING.set(actor)
    try:
        yield
    finally:
        _ACTING.reset(token)


def signed_in_here() -> Actor | None:
    """The actor of this process's command, or None (a deployed run, a worker)."""
    return _ACTING.get()
