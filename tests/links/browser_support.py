"""A real Chromium for the widget tests, and a host page on another 127.0.0.1 origin.

Debian's chromium is installed by `scripts/install-browser.sh` (run by scripts/test.sh). Where
it is absent the browser tests skip with that reason, except under CI=true, where they fail.
"""

from __future__ import annotations

import os
import shutil
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path

import pytest

CHROMIUM = "/usr/bin/chromium"
CHROMIUM_ARGS = [
    "--no-sandbox",
    "--disable-gpu",
    "--disable-background-networking",
    "--disable-component-update",
    "--disable-sync",
    "--no-first-run",
]
ARTIFACTS = Path(__file__).resolve().parents[2] / "test-artifacts"

HOST_PAGE = """<!doctype html><html><head><meta charset="utf-8"><title>Merchant page</title></head>
<body style="margin:0;background:#eef1f4">
<iframe id="w" title="payout widget"
  style="width:360px;height:120px;border:0;background:#fff"></iframe>
<script>
const widgetOrigin = new URLSearchParams(location.search).get("origin");
window.messages = []; window.rejected = [];
window.addEventListener("message", (event) => {
  // What every host must do: trust only the widget's origin and source.
  if (event.origin !== widgetOrigin || !event.data || event.data.source !== "payout-widget") {
    window.rejected.push(String(event.origin)); return;
  }
  window.messages.push({type: event.data.type, data: event.data.data, origin: event.origin});
  if (event.data.type === "resize") {
    document.getElementById("w").style.height = event.data.data.height + "px";
  }
});
window.embed = (src, width) => {
  const frame = document.getElementById("w");
  frame.style.width = (width || 360) + "px";
  frame.src = src;
};
window.popup = (src) => { window.pop = window.open(src, "widget", "popup,width=420,height=640"); };
</script></body></html>"""


def require_browser() -> str:
    """The chromium path; skip (or fail under CI=true) when it is not installed."""
    if shutil.which(CHROMIUM) or os.path.exists(CHROMIUM):
        return CHROMIUM
    reason = f"{CHROMIUM} is not installed (bash scripts/install-browser.sh installs it)"
    if os.environ.get("CI", "").lower() == "true":
        pytest.fail(f"CI=true and {reason}")
    pytest.skip(reason)


class _HostHandler(BaseHTTPRequestHandler):
    def do_GET(self) -> None:
        body = HOST_PAGE.encode("utf-8")
        self.send_response(200)
        self.send_header("Content-Type", "text/html; charset=utf-8")
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: object) -> None:
        """Quiet."""


def serve_host_page() -> Iterator[str]:
    """Serve the host page on 127.0.0.1 (its own port: another origin than the widget's)."""
    server = ThreadingHTTPServer(("127.0.0.1", 0), _HostHandler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()


def save_screenshot(page: object, tmp_path: Path, name: str) -> Path:
    """Screenshot into the test's folder and a copy into test-artifacts/ (gitignored)."""
    path = tmp_path / name
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    ARTIFACTS.mkdir(exist_ok=True)
    shutil.copy(path, ARTIFACTS / name)
    return path
