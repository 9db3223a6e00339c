"""What one look of the watchdog did, as its artifact and the command's lines."""

from __future__ import annotations

from payflow.watchdog.watch import Watched


def watch_lines(watched: list[Watched]) -> list[str]:
    """One line per batch looked at; one line saying so when none needed anything."""
    if not watched:
        return ["watchdog: every batch with unfinished rows has a live run, or waits for a person"]
    return [f"batch {w.batch_id}: {w.verdict.value}: {w.line}" for w in watched]


def watch_markdown(watched: list[Watched]) -> str:
    """The watchdog run's artifact: a table of the batches it acted on."""
    if not watched:
        return watch_lines(watched)[0]
    rows = [f"| {w.batch_id} | {w.verdict.value} | {w.line} |" for w in watched]
    return "\n".join(["| batch | verdict | what |", "|---|---|---|", *rows])
