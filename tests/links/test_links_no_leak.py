"""No claim token, signed link or API token in any log, Prefect artifact, result or report:
the real command issues claims (Prefect flow and all), then the claims are opened and paid,
and every file payflow and Prefect wrote is searched for each secret."""

from __future__ import annotations

import logging
import os
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import httpx
import pytest
from links_support import pay_through_widget, query_of, read_claims, write_links_file
from pydantic import SecretStr

from payflow.api import PayoutsClient
from payflow.links.batch import report_links
from payflow.links.server import ClaimsServer
from payflow.links.store import LinkStore


def all_bytes(folder: Path, skip: Path) -> Iterator[tuple[Path, bytes]]:
    for path in folder.rglob("*"):
        if path.is_file() and path != skip:
            yield path, path.read_bytes()


@pytest.mark.slow
def test_secrets_reach_no_log_artifact_or_report(
    tmp_path: Path, make_sandbox, caplog: pytest.LogCaptureFixture
) -> None:
    home, prefect_home, out = tmp_path / "home", tmp_path / "prefect", tmp_path / "out"
    source = write_links_file(
        tmp_path / "links.csv",
        [("leak-1", "u1", "100", ""), ("leak-2", "u2", "200.50", ""), ("leak-3", "u3", "5", "")],
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("PAYFLOW_", "PREFECT_"))}
    env.update(
        PAYFLOW_HOME=str(home),
        PREFECT_HOME=str(prefect_home),
        PAYFLOW_LINKS_URL="https://pay.example.test",
    )
    done = subprocess.run(
        [sys.executable, "-m", "payflow", "links", str(source), "--out", str(out)],
        env=env,
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=400,
        stdin=subprocess.DEVNULL,
        check=False,
    )
    assert done.returncode == 0, done.stderr[-2000:]
    (claims_file,) = out.glob("*-claims-*.csv")
    urls = read_claims(claims_file)
    tokens = [url.rsplit("/", 1)[1] for url in urls.values()]
    assert len(tokens) == 3

    # The recipients open their claims (two of them twice) and one of them pays.
    caplog.set_level(logging.INFO)
    caplog.set_level(logging.DEBUG, logger="payflow")
    sandbox = make_sandbox()
    store = LinkStore.open(f"sqlite:///{(home / 'ledger.sqlite3').resolve()}")
    links: list[str] = []
    with (
        PayoutsClient(sandbox.token, base_url=sandbox.url) as client,
        ClaimsServer(store, client, SecretStr(sandbox.token), sandbox.url) as server,
    ):
        # Each recipient's browser keeps its cookies: a claim opens again on the same device.
        with httpx.Client() as browser:
            for external_id in ("leak-1", "leak-1", "leak-2"):
                local = urls[external_id].replace("https://pay.example.test", server.url)
                links.append(browser.get(local).headers["location"])
            devices = [c.value for c in browser.cookies.jar if c.name == "payflow_claim_device"]
        assert pay_through_widget(links[0])["created"] is True
    report_links(store, next(iter(out.glob("*-links.csv"))).name.split("-")[0], out, sandbox=True)
    store.close()

    secrets = [*tokens, sandbox.token, *devices]
    for link in links:
        query = query_of(link)
        secrets += [link, query["signature"], query["payload"]]
    everything = [
        *all_bytes(home, skip=claims_file),
        *all_bytes(prefect_home, skip=claims_file),
        *all_bytes(out, skip=claims_file),
    ]
    assert any(p.suffix == ".db" for p, _ in everything), "Prefect's database was searched"
    assert any(p.name.endswith("-links.xlsx") for p, _ in everything)
    # This test's own httpx requests play the recipient's browser opening a claim URL: those
    # log lines are the browser's, not payflow's.
    payflow_records = [
        r.getMessage()
        for r in caplog.records
        if not (r.name == "httpx" and "/claim/" in r.getMessage())
    ]
    logs = "\n".join(payflow_records) + done.stdout + done.stderr
    for secret in secrets:
        assert secret not in logs
        for path, data in everything:
            assert secret.encode() not in data, f"a secret is in {path}"
    assert "leak-1" in caplog.text  # the claim server did log, by externalId only
