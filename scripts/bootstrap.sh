#!/usr/bin/env bash
# Create .venv and install exactly what requirements.lock pins; re-runs only when the lock or
# pyproject changes, so the two commands of the README are cheap after the first time.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
venv="$root/.venv"
stamp="$venv/.payflow-installed"
want="$(cat "$root/requirements.lock" "$root/pyproject.toml" | sha256sum | cut -d' ' -f1)"
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
fi
if [ "$(cat "$stamp" 2>/dev/null)" != "$want" ]; then
  echo "payflow: installing pinned dependencies into .venv (first run takes a few minutes)..." >&2
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check -r "$root/requirements.lock" 2>&1 \
    | grep -v "^WARNING: Location" >&2 || true
  "$venv/bin/python" -m pip install --quiet --disable-pip-version-check --no-deps --no-build-isolation -e "$root" 2>&1 \
    | grep -v "^WARNING: Location" >&2 || true
  "$venv/bin/python" -c "import payflow, prefect, pandera, httpx" # fail loudly if the install did not take
  echo "$want" > "$stamp"
fi
