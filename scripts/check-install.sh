#!/usr/bin/env bash
# Install payflow the way a user does (`pip install .`, not editable) into a fresh venv in a temp
# dir, then validate and pay the samples from another directory against the embedded sandbox.
# Fails when a data file is missing from the wheel or a generic top-level package is installed.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
venv_pip() {
  # pip's output only when it fails (this machine's index notes are noise otherwise).
  if ! (cd "$work" && "$work/venv/bin/python" -m pip install --quiet \
    --disable-pip-version-check --no-compile "$@" >"$work/pip.log" 2>&1); then
    grep -v "^WARNING: Location" "$work/pip.log" >&2
    return 1
  fi
}

python3 -m venv "$work/venv"
# The locked requirements come from pip's cache after the first run; --no-compile saves most of
# the remaining time. The project itself goes on top, without its dependencies.
venv_pip -r "$root/requirements.lock"
venv_pip --no-deps "$root"

site="$("$work/venv/bin/python" -c 'import sysconfig; print(sysconfig.get_path("purelib"))')"
for generic in flows tasks schemas; do
  if [ -e "$site/$generic" ]; then
    echo "check-install: the wheel installed a top-level '$generic' package" >&2
    exit 1
  fi
done
if [ -e "$site/__editable__.payflow-0.1.0.pth" ] || [ -L "$site/payflow/flows" ]; then
  echo "check-install: payflow was not installed as a plain copy" >&2
  exit 1
fi

mkdir "$work/elsewhere"
cd "$work/elsewhere"
export PAYFLOW_HOME="$work/home"
unset PAYFLOW_API_URL PAYFLOW_API_TOKEN PAYFLOW_LEDGER_URL
"$work/venv/bin/payflow" validate "$root/data/batch_clean.csv"
"$work/venv/bin/payflow" validate "$root/data/batch_clean.xlsx"
"$work/venv/bin/payflow" run "$root/data/batch_clean.csv" --yes
echo "check-install: the installed payflow validated and paid the samples"
