#!/usr/bin/env bash
# Set up (first time), then pay the sample batch against the embedded sandbox: no real money moves.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
bash scripts/bootstrap.sh
exec .venv/bin/payflow run data/batch_clean.csv --yes "$@"
