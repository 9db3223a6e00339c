"""flows/, tasks/ and schemas/ are imported only as payflow.flows, payflow.tasks, payflow.schemas.

The wheel ships them under payflow (pyproject's package-dir); in the checkout the symlinks
payflow/flows -> ../flows (and the others) give the same names. A module imported under a
second name would be a second copy with its own state.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
MAPPED = ("flows", "tasks", "schemas")
OLD_IMPORT = re.compile(r"^\s*(from|import) (flows|tasks|schemas)[. ]", re.M)


def test_the_checkout_maps_each_folder_into_payflow():
    for name in MAPPED:
        link = REPO / "payflow" / name
        assert link.is_symlink() and link.resolve() == (REPO / name).resolve()


def test_no_source_imports_a_top_level_name():
    offenders = [
        str(path.relative_to(REPO))
        for folder in ("payflow", "bench", "tests", *MAPPED)
        for path in (REPO / folder).rglob("*.py")
        if OLD_IMPORT.search(path.read_text(encoding="utf-8"))
    ]
    assert offenders == [], "import payflow.flows/.tasks/.schemas instead"


def test_importing_the_cli_and_flows_loads_no_top_level_package():
    code = (
        "import sys, payflow.cli, payflow.flows.payout_batch, payflow.flows.rerun;"
        f"print(sorted(m for m in sys.modules if m.split('.')[0] in {MAPPED!r}))"
    )
    shown = subprocess.run(
        [sys.executable, "-c", code], cwd="/", capture_output=True, text=True, check=True
    )
    assert shown.stdout.strip() == "[]"
