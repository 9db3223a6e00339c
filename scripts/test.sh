#!/usr/bin/env bash
# Set up (first time) and run lint, format check, types and the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
bash scripts/ensure-postgres.sh
bash scripts/install-browser.sh
bash scripts/install-report-tools.sh
export PATH="$root/.venv/bin:$PATH"
ruff check .
ruff format --check .
mypy payflow flows tasks schemas
# Four workers on two cores: most tests wait on real servers and subprocesses, not on the CPU,
# and one worker spends 7.5 minutes on the long approval pause.
# Files in collection order, where tests/conftest.py puts the slow ones first: the 7.5-minute
# long-pause test then runs beside the rest instead of alone at the end.
pytest -n 4 --dist loadfile --no-loadscope-reorder "$@"
# A plain `pip install .` in a fresh venv must validate and pay the samples from anywhere.
bash scripts/check-install.sh
