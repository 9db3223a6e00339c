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
apt-get update -qq >/dev/null
apt-get install -y -qq "$@" >/dev/null
