#!/usr/bin/env bash
# LibreOffice Calc and poppler, so the report test can save a PNG of the summary sheet
# (XLSX -> PDF -> PNG). Optional: without them that one test skips and says why.
set -euo pipefail
if command -v soffice >/dev/null && command -v pdftoppm >/dev/null; then
  exit 0
fi
apt-get update -qq
DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends \
  libreoffice-calc poppler-utils
