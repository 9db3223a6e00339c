"""`payflow links serve` off this machine only on purpose, as the console (issue 35): a host
other than loopback needs TLS or named proxies, and proxy headers are trusted from those only.
Before: uvicorn's default believed X-Forwarded-Proto from 127.0.0.1, so the claim's device
cookie was marked Secure for a plain-HTTP page whenever a local process said "https"."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from links_support import read_claims, write_links_file
from support.servers import free_port
from support.serving_process import serving

from payflow.links.batch import issue_claims_file, register_links
from payflow.links.rows import read_link_rows
from payflow.links.store import LinkStore

pytestmark = pytest.mark.timeout(300)
BASE = "https://claims.example"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env["PAYFLOW_HOME"] = str(tmp_path / "home")
    return env


def _secure(response: httpx.Response) -> bool:
    cookie = response.headers["set-cookie"]
    return "secure" in [part.strip().lower() for part in cookie.split(";")]


def test_links_serve_beyond_loopback_needs_tls_or_a_named_proxy(tmp_path: Path) -> None:
    # The console's rule (`payflow.console.exposure`), whose every refusal the webhooks' test
    # and the console's go through: here, that links serve asks it at all.
    command = ["links", "serve", "--port", str(free_port()), "--host", "0.0.0.0"]
    refused = subprocess.run(
        [sys.executable, "-m", "payflow", *command],
        env=_env(tmp_path),
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=60,
        check=False,
    )
    assert refused.returncode == 2, refused.stderr
    said = "would serve claim pages and their cookie beyond this machine over plain HTTP"
    assert refused.stderr.count("\n") == 1 and said in refused.stderr, refused.stderr


def test_a_forwarded_https_is_believed_only_from_the_named_proxies(tmp_path: Path) -> None:
    env = _env(tmp_path)
    store = LinkStore.open(f"sqlite:///{tmp_path / 'home' / 'ledger.sqlite3'}")
    rows = [("gift-1", "anna", "25", ""), ("gift-2", "vera", "25", "")]
    report = read_link_rows(write_links_file(tmp_path / "gifts.csv", rows))
    registered = register_links(store, report)
    issued = issue_claims_file(
        store, report.batch_id, registered.new, out_dir=tmp_path, base_url=BASE, days=7
    )
    store.close()
    assert issued.path is not None
    urls = read_claims(Path(issued.path))
    says_https = {"X-Forwarded-Proto": "https"}

    port = free_port()
    with serving(["links", "serve", "--port", str(port)], env, tmp_path, "answering claims"):
        local = urls["gift-1"].replace(BASE, f"http://127.0.0.1:{port}")
        opened = httpx.get(local, headers=says_https, timeout=30)
    assert opened.status_code in (302, 303, 307) and not _secure(opened), opened.headers

    port = free_port()
    named = ["links", "serve", "--port", str(port), "--forwarded-allow-ips", "127.0.0.1"]
    with serving(named, env, tmp_path, "answering claims"):
        local = urls["gift-2"].replace(BASE, f"http://127.0.0.1:{port}")
        opened = httpx.get(local, headers=says_https, timeout=30)
    assert opened.status_code in (302, 303, 307) and _secure(opened), opened.headers
