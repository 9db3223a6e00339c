"""Counts in the sentences an operator reads: "1 row", "3 rows"."""

from __future__ import annotations


def plural(n: int, noun: str) -> str:
    """`noun` as it goes with `n`: "row" for 1, "rows" otherwise ("batch", "batches"; "people")."""
    if n == 1:
        return noun
    if noun == "person":
        return "people"
    return f"{noun}es" if noun.endswith(("s", "sh", "ch", "x")) else f"{noun}s"


def counted(n: int, noun: str) -> str:
    """`n` and the noun that goes with it: "1 row", "0 rows", "12 rows"."""
    return f"{n} {plural(n, noun)}"
