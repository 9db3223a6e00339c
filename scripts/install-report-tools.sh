#!/usr/bin/env bash
# LibreOffice Calc (headless) and poppler, so the report test can save a PNG of the summary
# sheet (XLSX -> PDF -> PNG): it proves LibreOffice opens the report. Run by scripts/test.sh;
# without them that one test skips and says why, except under CI=true, where it fails.
# Needs root; elsewhere it only says what to do.
set -euo pipefail
if command -v soffice >/dev/null && command -v pdftoppm >/dev/null; then
  exit 0
fi
if [ "$(id -u)" -ne 0 ]; then
  echo "payflow: soffice or pdftoppm is missing; as root run:" \
    "apt-get install -y --no-install-recommends libreoffice-calc-nogui poppler-utils" >&2
  exit 0
fi
echo "payflow: installing LibreOffice Calc and poppler for the report picture test..." >&2
export DEBIAN_FRONTEND=noninteractive
apt-get update -qq >/dev/null
apt-get install -y -qq --no-install-recommends libreoffice-calc-nogui poppler-utils >/dev/null
