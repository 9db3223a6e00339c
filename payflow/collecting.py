"""Pauses of the interpreter's cyclic collector while a step builds many objects that live on.

CPython counts each new container towards its next collection, young or full, whether or not
anything became garbage. Two steps build objects that nearly all live on, and paid for
collections that found little:

- a command's start-up: importing its modules (Prefect, pandas, SQLAlchemy: about 230,000
  objects alive after) ran collections worth 0.3 s of CPU. `payflow.cli.main` imports under a
  pause, then `settle()`s: one collection finalises what the imports left as garbage, and what
  is alive is frozen, so the full collections of the command's work skip it;
- reading a 100,000-row workbook (about a million objects, a list per row and its texts): 0.3 s
  of a 2.9 s read. What such a step leaves as garbage is collected at the next collection after
  it, as before.
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


def settle() -> None:
    """After a start-up's imports (made under a pause), and at exit (`payflow.exiting`): one
    collection, then the objects alive frozen, so that later full collections skip them."""
    gc.collect()
    gc.freeze()
