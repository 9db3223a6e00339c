#!/usr/bin/env bash
# Set up (first time) and run lint, format check, types and the whole test suite.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
logs="$(mktemp -d)"
# A suite stopped early (Ctrl-C, a failure) leaves none of the checks running beside it.
trap 'kill $(jobs -p) 2>/dev/null || true; rm -rf "$logs"' EXIT

# On a clean machine the Python packages (pip) and the Debian ones (apt) both take minutes and
# wait on the network, not on each other: they install side by side.
bash scripts/bootstrap.sh &
python_packages=$!
bash scripts/ensure-postgres.sh
bash scripts/install-browser.sh
bash scripts/install-report-tools.sh
wait "$python_packages"
export PATH="$root/.venv/bin:$PATH"
ruff check .
ruff format --check .

# The type check, the installed-package check (a plain `pip install .` in a fresh venv must
# validate and pay the samples from anywhere) and the docs build need no test and no test needs
# them: they run beside the suite and their output follows the suite's. The suite keeps both
# cores busy, so this saves their waits (pip's disk, a server's start), not their CPU time.
mypy payflow flows tasks schemas >"$logs/mypy.log" 2>&1 &
types=$!
bash scripts/check-install.sh >"$logs/check-install.log" 2>&1 &
installed=$!
# The docs site: a broken link, a missing page or a page left out of the nav fails the build.
(NO_MKDOCS_2_WARNING=1 mkdocs build --strict --quiet --site-dir "$logs/site" \
  && echo "docs: mkdocs build --strict passed") >"$logs/mkdocs.log" 2>&1 &
docs=$!

# Four workers on two cores: a test's own process often waits on the servers and subprocesses
# it started, and one worker spends about 7 minutes on the long approval pause; with four, both
# cores stay busy.
# Files in collection order, where tests/conftest.py puts the slow ones first: the 7-minute
# long-pause test then runs beside the rest instead of alone at the end.
suite=0
pytest -n 4 --dist loadfile --no-loadscope-reorder "$@" || suite=$?

finish() {  # NAME PID LOG: the check's last line, or all its output when it failed
  if wait "$2"; then
    tail -n 1 "$3"
  else
    echo "$1 failed:" >&2
    cat "$3" >&2
    return 1
  fi
}
failed=0
finish "mypy" "$types" "$logs/mypy.log" || failed=1
finish "check-install" "$installed" "$logs/check-install.log" || failed=1
finish "mkdocs" "$docs" "$logs/mkdocs.log" || failed=1
if [ "$suite" -ne 0 ]; then
  exit "$suite"
fi
exit "$failed"
