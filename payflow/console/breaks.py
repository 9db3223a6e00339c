"""Where a line may end inside an id or a rule name: after one of its own separators.

A browser breaks such a word anywhere once it is told to (`overflow-wrap: anywhere`), which
split `rf-sample-1111` into `rf-sample-11` / `11` and `amount_positive` mid-word; and never
after `_`, or after a `-` followed by a digit, when it is not. So the page marks each
separator as a place to break (`<wbr>`) and the CSS (`.id`) breaks nowhere else: a segment
too long for its column scrolls with its table.
"""

from __future__ import annotations

import re

from markupsafe import Markup, escape

# After the externalId alphabet's punctuation that joins its parts, and a rule name's underscore.
AFTER_SEPARATOR = re.compile(r"(?<=[-_.:@/~])")
BREAK = Markup("<wbr>")


def at_separators(text: object) -> Markup:
    """`text` escaped, with a line break allowed after each separator and nowhere else."""
    parts = AFTER_SEPARATOR.split("" if text is None else str(text))
    return BREAK.join(escape(part) for part in parts if part)
