#!/usr/bin/env bash
# Set up (first time) and run lint, format check, types and the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
bash scripts/ensure-postgres.sh
bash scripts/install-browser.sh
export PATH="$root/.venv/bin:$PATH"
ruff check .
ruff format --check .
mypy payflow flows tasks schemas
# Two workers: most tests wait on real servers and subprocesses, not on the CPU.
pytest -n 2 --dist loadfile "$@"
# A plain `pip install .` in a fresh venv must validate and pay the samples from anywhere.
bash scripts/check-install.sh
