"""`payflow webhooks` off this machine only on purpose, as the console (issue 35): a host other
than loopback needs TLS or named proxies, and proxy headers are trusted from those only.
Before: uvicorn's default believed X-Forwarded-For from 127.0.0.1, so any local process could
pose as any sender. Real `payflow webhooks` processes, real HTTP and HTTPS."""

from __future__ import annotations

import os
import ssl
import subprocess
import sys
from pathlib import Path

import httpx
import pytest
from support.servers import free_port
from support.serving_process import serving
from support.tls import self_signed_certificate

pytestmark = pytest.mark.timeout(300)
FORGED = "203.0.113.7"


def _env(tmp_path: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env["PAYFLOW_HOME"] = str(tmp_path / "home")
    return env


def _forged_webhook(base: str, **options: object) -> int:
    headers = {"X-Forwarded-For": FORGED, "X-Signature": "0" * 128}
    answer = httpx.post(f"{base}/webhooks", content=b"{}", headers=headers, timeout=10, **options)
    return answer.status_code


def test_webhooks_beyond_loopback_need_tls_or_a_named_proxy(tmp_path: Path) -> None:
    everywhere = ["--host", "0.0.0.0"]
    for options, said in (
        (everywhere, "would serve payout statuses beyond this machine over plain HTTP"),
        ([*everywhere, "--forwarded-allow-ips", "*"], "trusts proxy headers from anyone"),
        ([*everywhere, "--certfile", str(tmp_path / "c.pem")], "--certfile and --keyfile go"),
    ):
        refused = subprocess.run(
            [sys.executable, "-m", "payflow", "webhooks", "--port", str(free_port()), *options],
            env=_env(tmp_path),
            cwd=tmp_path,
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
        assert refused.returncode == 2, (options, refused.stderr)
        assert refused.stderr.count("\n") == 1 and said in refused.stderr, refused.stderr
        assert "listening" not in refused.stderr


def test_proxy_headers_are_believed_only_from_the_named_proxies(tmp_path: Path) -> None:
    port = free_port()
    args = ["webhooks", "--port", str(port)]
    with serving(args, _env(tmp_path), tmp_path, "listening on") as err:
        assert _forged_webhook(f"http://127.0.0.1:{port}") == 401
    said = err.read_text(encoding="utf-8")
    assert "bad or missing X-Signature (from 127.0.0.1)" in said and FORGED not in said, said

    port = free_port()
    named = ["webhooks", "--port", str(port), "--forwarded-allow-ips", "127.0.0.1"]
    with serving(named, _env(tmp_path), tmp_path, "listening on") as err:
        assert _forged_webhook(f"http://127.0.0.1:{port}") == 401
    assert f"(from {FORGED})" in err.read_text(encoding="utf-8")


def test_over_tls_they_listen_beyond_loopback(tmp_path: Path) -> None:
    cert, key = self_signed_certificate(tmp_path)
    port = free_port()
    args = ["webhooks", "--port", str(port), "--host", "0.0.0.0"]
    args += ["--certfile", str(cert), "--keyfile", str(key)]
    with serving(args, _env(tmp_path), tmp_path, "listening on") as err:
        assert f"listening on https://0.0.0.0:{port}/webhooks" in err.read_text("utf-8")
        trusted = ssl.create_default_context(cafile=str(cert))
        assert _forged_webhook(f"https://127.0.0.1:{port}", verify=trusted) == 401
        with pytest.raises(httpx.HTTPError):  # no plain HTTP beside it
            httpx.get(f"http://127.0.0.1:{port}/health", timeout=10)
    assert FORGED not in err.read_text(encoding="utf-8")
