#!/usr/bin/env bash
# LibreOffice Calc (headless) and poppler, so the report test can save a PNG of the summary
# sheet (XLSX -> PDF -> PNG): it proves LibreOffice opens the report. Run by scripts/test.sh;
# without them that one test skips and says why, except under CI=true, where it fails.
set -euo pipefail
if command -v soffice >/dev/null && command -v pdftoppm >/dev/null; then
  exit 0
fi
bash "$(dirname "${BASH_SOURCE[0]}")/apt-install.sh" "the report picture test" \
  --no-install-recommends libreoffice-calc-nogui poppler-utils
