#!/usr/bin/env bash
# Install Debian's chromium for the widget's browser tests (Playwright drives it; it downloads
# no browser of its own). Needs root; elsewhere it only says what to do.
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "payflow: /usr/bin/chromium is missing; as root run: apt-get install -y chromium chromium-driver" >&2
  exit 0
fi
echo "payflow: installing chromium for the browser tests..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq chromium chromium-driver >/dev/null
