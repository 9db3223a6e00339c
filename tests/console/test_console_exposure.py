"""`payflow console` off this machine only on purpose, and sign-in limits nobody can turn against
an operator: real console processes, real HTTP and HTTPS (a certificate made here)."""

from __future__ import annotations

import re
import ssl
import subprocess
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import httpx
import pytest
from cli.cli_support import PAYFLOW, payflow_env, run_payflow
from console_support import PASSWORD, csrf_of, wait_for_line
from support.servers import free_port
from support.tls import self_signed_certificate

from payflow.console.operators import add_operator
from payflow.ledger import Ledger

pytestmark = pytest.mark.timeout(300)
# Sign-in needs no Prefect: a console pointed at a closed port starts no temporary server.
NO_PREFECT = "http://127.0.0.1:9/api"


def _env(tmp_path: Path) -> dict[str, str]:
    ledger_url = f"sqlite:///{tmp_path / 'ledger.sqlite3'}"
    if not (tmp_path / "ledger.sqlite3").exists():
        ledger = Ledger.open(ledger_url)
        for name, role in (("mia", "maker"), ("carl", "checker")):
            add_operator(ledger, name, role, PASSWORD)
        ledger.close()
    return payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_LEDGER_URL=ledger_url,
        PREFECT_API_URL=NO_PREFECT,
    )


@contextmanager
def _console(tmp_path: Path, *options: str) -> Iterator[str]:
    """A `payflow console` process with these options on a free port; its printed URL."""
    port = free_port()
    out, err = tmp_path / "console.out", tmp_path / "console.err"
    with out.open("w") as stdout, err.open("w") as stderr:
        console = subprocess.Popen(
            [*PAYFLOW, "console", "--port", str(port), *options],
            env=_env(tmp_path),
            cwd=tmp_path,
            stdout=stdout,
            stderr=stderr,
            stdin=subprocess.DEVNULL,
            text=True,
        )
    try:
        yield wait_for_line(out, "payflow console:", console).removeprefix("payflow console: ")
    finally:
        console.terminate()
        console.wait(timeout=60)
    assert "Traceback" not in err.read_text(encoding="utf-8")


def _sign_in(
    client: httpx.Client, name: str, password: str, forwarded_for: str | None = None
) -> httpx.Response:
    headers = {"X-Forwarded-For": forwarded_for} if forwarded_for else {}
    token = csrf_of(client.get("/login", headers=headers).text)
    data = {"csrf": token, "name": name, "password": password}
    return client.post("/login", data=data, headers=headers)


def _secure(response: httpx.Response) -> bool:
    cookie = response.headers["set-cookie"]
    return "secure" in [part.strip().lower() for part in cookie.split(";")]


def test_a_host_beyond_loopback_needs_tls_or_a_named_proxy(tmp_path: Path) -> None:
    env = _env(tmp_path)
    everywhere = ["--host", "0.0.0.0"]
    for options, said in (
        (everywhere, "give --certfile and --keyfile (TLS), or --forwarded-allow-ips"),
        ([*everywhere, "--forwarded-allow-ips", "*"], "trusts proxy headers from anyone"),
        ([*everywhere, "--certfile", str(tmp_path / "c.pem")], "--certfile and --keyfile go"),
    ):
        refused = run_payflow(
            ["console", "--port", str(free_port()), *options], env, tmp_path, timeout=60
        )
        assert refused.returncode == 2, (options, refused.stderr)
        assert refused.stderr.count("\n") == 1 and said in refused.stderr, refused.stderr
        assert "payflow console:" not in refused.stdout


def test_over_tls_it_serves_https_with_a_secure_cookie_and_ignores_forged_proxy_headers(
    tmp_path: Path,
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    everywhere = "0.0.0.0"
    with _console(tmp_path, "--host", everywhere, "--certfile", str(cert), "--keyfile", str(key)):
        base = f"https://127.0.0.1:{_port_of(tmp_path)}"
        trusted = ssl.create_default_context(cafile=str(cert))
        with httpx.Client(base_url=base, verify=trusted, timeout=60) as client:
            page = client.get("/login")
            assert page.status_code == 200 and _secure(page)
            signed = _sign_in(client, "mia", PASSWORD)
            assert signed.status_code == 303 and _secure(signed)
            # uvicorn trusted X-Forwarded-For from 127.0.0.1: a new forged address per attempt
            # got unlimited tries past the limit per address. No proxy is named here.
            answers = [
                _sign_in(client, f"guess{n}", "wrong", forwarded_for=f"203.0.113.{n}").status_code
                for n in range(21)
            ]
            assert answers == [401] * 20 + [429], answers
        with pytest.raises(httpx.HTTPError):  # no plain HTTP beside it
            httpx.get(base.replace("https", "http") + "/login", timeout=10)


def _port_of(tmp_path: Path) -> int:
    line = (tmp_path / "console.out").read_text(encoding="utf-8")
    found = re.search(r"https?://[^:]+:(\d+)/", line)
    assert found and found.group(0).startswith("https://"), line
    return int(found.group(1))


@pytest.mark.slow
def test_failures_slow_a_name_and_limit_an_address_but_lock_no_operator_out(
    tmp_path: Path,
) -> None:
    strangers, office = "203.0.113.7", "198.51.100.4"
    with (
        _console(tmp_path, "--forwarded-allow-ips", "127.0.0.1") as url,
        httpx.Client(base_url=url, timeout=120) as client,
    ):
        # Behind the named proxy, its X-Forwarded-Proto says the page was served over HTTPS.
        assert _secure(client.get("/login", headers={"X-Forwarded-Proto": "https"}))
        assert not _secure(client.get("/login"))
        # Five wrong passwords typed for the checker's name: she still signs in, slowed only.
        wrong = [_sign_in(client, "carl", "wrong-guess", strangers).status_code for _ in range(5)]
        assert wrong == [401] * 5
        assert _sign_in(client, "carl", PASSWORD, office).status_code == 303
        # mia signed in from the strangers' address before; then 20 failures there.
        assert _sign_in(client, "mia", PASSWORD, strangers).status_code == 303
        answers = [_sign_in(client, f"guess{n}", "wrong", strangers).status_code for n in range(16)]
        assert answers == [401] * 15 + [429], answers  # 5 + 15 failures from that address
        assert _sign_in(client, "mia", PASSWORD, strangers).status_code == 303
        assert _sign_in(client, "carl", PASSWORD, strangers).status_code == 429
        assert _sign_in(client, "carl", PASSWORD, office).status_code == 303
    log = (tmp_path / "home" / "logs" / "payflow.log").read_text(encoding="utf-8")
    assert f"sign-in failed for name 'carl' from {strangers}: 5 failures" in log
    assert f"too many failures from address {strangers}" in log
    assert "wrong-guess" not in log and PASSWORD not in log
