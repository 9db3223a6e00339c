"""The settings page names every setting payflow reads, once, with its description: the README's
hand-kept table once listed a `PAYFLOW_APPROVER` that nothing read and left out two that were.
The page's table is generated from `Settings` (payflow.docs_pages), so a new setting appears
there once its Field has a description."""

import re
from pathlib import Path

from payflow.docs_pages import settings_markdown
from payflow.settings import Settings

PAGE = Path(__file__).resolve().parents[1] / "docs" / "reference" / "settings.md"


def _table_names() -> list[str]:
    block = PAGE.read_text("utf-8").split("<!-- settings:start -->", 1)[1]
    block = block.split("<!-- settings:end -->", 1)[0]
    return re.findall(r"^\| `(PAYFLOW_[A-Z_]+)` \|", block, re.MULTILINE)


def test_every_setting_has_a_description() -> None:
    missing = [name for name, field in Settings.model_fields.items() if not field.description]
    assert not missing, f"give these settings a Field(description=...): {missing}"


def test_the_settings_page_names_each_setting_once() -> None:
    names = _table_names()
    fields = {f"PAYFLOW_{name.upper()}" for name in Settings.model_fields}
    assert len(names) == len(set(names)), (
        f"listed twice: {sorted({n for n in names if names.count(n) > 1})}"
    )
    assert set(names) == fields, (
        f"missing from docs/reference/settings.md: {sorted(fields - set(names))} (run "
        f".venv/bin/python -m payflow.docs_pages); not a setting: {sorted(set(names) - fields)}"
    )


def test_each_row_says_the_setting_s_description() -> None:
    for name, field in Settings.model_fields.items():
        assert f"| `PAYFLOW_{name.upper()}` |" in settings_markdown()
        assert (field.description or "").strip() in settings_markdown()
