"""Pictures for the docs site, taken by the tests that drive the console and render the reports.

docs/img/ holds the pictures the docs show, committed so that `mkdocs build --strict` passes on
a fresh clone where no test has run. A test that takes one copies it there when
PAYFLOW_DOCS_IMAGES=1, so a changed page is pictured again by running its test:

    PAYFLOW_DOCS_IMAGES=1 .venv/bin/pytest -p no:randomly \\
        tests/console/test_console_browser.py::test_console_day \\
        tests/reconcile/test_report.py::test_a_picture_of_the_summary_sheet

Without it nothing under docs/ changes: a test run leaves the checkout clean.
"""

from __future__ import annotations

import os
import shutil
from pathlib import Path

DOCS_IMAGES = Path(__file__).resolve().parents[2] / "docs" / "img"
REFRESH_VARIABLE = "PAYFLOW_DOCS_IMAGES"


def keep_for_docs(picture: Path, name: str) -> None:
    """Copy a picture a test took to docs/img/NAME when the docs' pictures are being refreshed."""
    if os.environ.get(REFRESH_VARIABLE) == "1":
        DOCS_IMAGES.mkdir(exist_ok=True)
        shutil.copy(picture, DOCS_IMAGES / name)
