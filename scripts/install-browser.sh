#!/usr/bin/env bash
# Install Debian's chromium for the widget's and console's browser tests (Playwright drives it;
# it downloads no browser of its own).
set -euo pipefail
if [ -x /usr/bin/chromium ]; then
  exit 0
fi
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "the browser tests" chromium chromium-driver
