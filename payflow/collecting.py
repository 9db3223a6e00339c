"""Pauses of the interpreter's cyclic collector while a step builds many objects that live on.

Reading a 100,000-row workbook makes about a million objects (a list per row, its texts) that
all outlive the read. CPython counts each new list towards its next collection, so the read ran
collections of the young objects every few hundred rows and several full ones over everything
alive (Prefect, pandas and SQLAlchemy loaded: about 230,000 objects), none of which found
garbage: 0.3 s of a 2.9 s read. A pause puts those off until the step ends; what the step left
as garbage is collected at the next collection after it, as before.
"""

from __future__ import annotations

import gc
import threading
from collections.abc import Iterator
from contextlib import contextmanager

_lock = threading.Lock()
_depth = 0  # pauses open now, in any thread
_resume = False  # whether the collector ran before the first of them


@contextmanager
def paused() -> Iterator[None]:
    """No automatic collection until the last open pause ends (pauses may nest or overlap in
    threads); a collector disabled before stays disabled."""
    global _depth, _resume
    with _lock:
        if _depth == 0:
            _resume = gc.isenabled()
            gc.disable()
        _depth += 1
    try:
        yield
    finally:
        with _lock:
            _depth -= 1
            if _depth == 0 and _resume:
                gc.enable()
