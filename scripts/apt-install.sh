#!/usr/bin/env bash
# Install Debian packages for a set of tests: `apt-install.sh "what for" [APT-OPTION...] PACKAGE...`.
# Needs root; elsewhere it only says what to run, and the tests that need them skip.
set -euo pipefail
purpose="$1"
shift
if [ "$(id -u)" -ne 0 ]; then
  echo "payflow: packages for $purpose are missing; as root run:" \
    "apt-get install -y $*" >&2
  exit 0
fi
echo "payflow: installing packages for $purpose ($*)..." >&2
export DEBIAN_FRONTEND=noninteractive
# One package-list update serves the set-up's installs (the browser's, then the report tools');
# a list too old to name a package's current file is updated once more and the install retried.
if [ -z "$(find /var/lib/apt/lists -maxdepth 1 -name '*_Packages*' -mmin -60 2>/dev/null | head -n 1)" ]; then
  apt-get update -qq >/dev/null
fi
apt-get install -y -qq "$@" >/dev/null || {
  apt-get update -qq >/dev/null
  apt-get install -y -qq "$@" >/dev/null
}
