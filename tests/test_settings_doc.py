"""README's settings table names every setting payflow reads, and only those: it listed a
`PAYFLOW_APPROVER` that nothing read and left out two that were."""

import re
from pathlib import Path

from payflow.settings import Settings

README = Path(__file__).resolve().parents[1] / "README.md"


def _table_names() -> list[str]:
    section = README.read_text("utf-8").split("## Settings", 1)[1].split("\n## ", 1)[0]
    names: list[str] = []
    for line in section.splitlines():
        if line.startswith("| `"):
            first_cell = line.split("|")[1]
            # `_MAX_COLUMNS` after `PAYFLOW_MAX_ROWS` is shorthand for PAYFLOW_MAX_COLUMNS.
            names += [
                f"PAYFLOW{n}" if n.startswith("_") else n
                for n in re.findall(r"`((?:PAYFLOW)?_[A-Z_]+)`", first_cell)
            ]
    return names


def test_the_settings_table_names_each_setting_once():
    names = _table_names()
    fields = {f"PAYFLOW_{name.upper()}" for name in Settings.model_fields}
    assert len(names) == len(set(names)), (
        f"listed twice: {sorted({n for n in names if names.count(n) > 1})}"
    )
    assert set(names) == fields, (
        f"missing from README: {sorted(fields - set(names))}; "
        f"not a setting: {sorted(set(names) - fields)}"
    )
