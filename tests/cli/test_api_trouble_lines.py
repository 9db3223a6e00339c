"""Every command that asks the payments API says a refused token, or an API it cannot reach, in
the same one line (payflow.wording.api_trouble), exit 2: never a traceback, the URL or the token.

Before, each command wrote its own line: `validate` named the banks list for a refused token,
and `run`, `pay`, `refund`, `rerun`, `links` and `reconcile` had no test of theirs."""

from __future__ import annotations

import json
import shutil
from collections.abc import Iterator
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow, write_sim_batch
from support.sandbox import SandboxFactory
from support.servers import free_port

from payflow.sandbox import SandboxServer

pytestmark = pytest.mark.timeout(600)

WRONG_TOKEN = "not-the-merchants-token-4242"
REFUSED = "payflow: the payments API refused the token (check PAYFLOW_API_TOKEN)"
UNREACHABLE = "payflow: the payments API could not be asked (PAYFLOW_API_URL): "


def _files(tmp_path: Path) -> dict[str, Path]:
    """A paid batch's file, a new batch, a refund file and a links file asking the services."""
    paid = tmp_path / "paid.csv"
    write_sim_batch(paid, 2, "paid")
    # The last row is CANCELED by the sandbox (requisites ending 3333): a row to rerun.
    with paid.open("a", encoding="utf-8") as handle:
        handle.write("paid-3,1000,XOF,SIM,2250700003333,Kouadio Yao,u-3\n")
    new = tmp_path / "new.csv"
    write_sim_batch(new, 2, "new")
    refunds = tmp_path / "refunds.csv"
    refunds.write_text(
        "orderId,externalId,amount\n0b8f3c2e-5a1d-4e6b-9f7a-100000000001,rf-1,10.00\n",
        encoding="utf-8",
    )
    links = tmp_path / "links.csv"
    links.write_text(
        "externalId,userId,amount,serviceId\nlink-1,client-1,250.50,102\n", encoding="utf-8"
    )
    return {"paid": paid, "new": new, "refunds": refunds, "links": links}


def _commands(files: dict[str, Path], batch_id: str) -> list[list[str]]:
    return [
        ["validate", str(files["new"])],
        ["run", str(files["new"]), "--yes"],
        ["pay", batch_id],
        ["rerun", batch_id, "--all-failed", "--reviewed"],
        ["reconcile", batch_id],
        ["status", batch_id, "--refresh"],
        ["refund", str(files["refunds"]), "--yes"],
        ["links", str(files["links"])],
    ]


@pytest.fixture(scope="module")
def paid(tmp_path_factory: pytest.TempPathFactory) -> Iterator[tuple[Path, SandboxServer, str]]:
    """A home whose ledger is bound to a sandbox's merchant, with a batch paid on it (one row
    CANCELED): its folder, the sandbox and the batch id. Paid once for the module (a paying
    `payflow run` costs 10-15 s of CPU); each test refuses its commands on a copy of the home."""
    factory = SandboxFactory()
    try:
        sandbox = factory.start()
        root = tmp_path_factory.mktemp("paid")
        env = payflow_env(
            root / "home",
            root / "prefect",
            PAYFLOW_API_URL=sandbox.url,
            PAYFLOW_API_TOKEN=sandbox.token,
        )
        files = _files(root)
        done = run_payflow(["run", str(files["paid"]), "--yes", "--json"], env, root)
        assert done.returncode == 1, done.stderr
        yield root / "home", sandbox, json.loads(done.stdout)["batch_id"]
    finally:
        factory.close()


def _paid_batch(
    tmp_path: Path, paid: tuple[Path, SandboxServer, str]
) -> tuple[dict[str, str], dict[str, Path], str, str]:
    """A copy of the paid home (what a command left in it stays in this test), its env against
    the sandbox, the files, the batch id and the sandbox's URL."""
    home, sandbox, batch_id = paid
    shutil.copytree(home, tmp_path / "home")
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=sandbox.url,
        PAYFLOW_API_TOKEN=sandbox.token,
    )
    return env, _files(tmp_path), batch_id, sandbox.url


def _one_line(done, command: list[str], starts: str, secrets: tuple[str, ...]) -> None:
    assert done.returncode == 2, (command, done.stdout, done.stderr)
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, (command, done.stderr)
    assert lines[0].startswith(starts), (command, lines[0])
    for secret in secrets:
        assert secret not in lines[0], (command, lines[0])


def test_a_refused_token_is_one_line_in_every_command_that_asks_the_api(tmp_path: Path, paid):
    env, files, batch_id, url = _paid_batch(tmp_path, paid)
    wrong = {**env, "PAYFLOW_API_TOKEN": WRONG_TOKEN}
    for command in _commands(files, batch_id):
        done = run_payflow(command, wrong, tmp_path)
        _one_line(done, command, REFUSED, (WRONG_TOKEN, url, "127.0.0.1"))


def test_an_api_that_cannot_be_reached_is_one_line_in_every_command_that_asks_it(
    tmp_path: Path, paid
):
    env, files, batch_id, _ = _paid_batch(tmp_path, paid)
    port = free_port()
    closed = {
        **env,
        "PAYFLOW_API_URL": f"http://user:pw-9876@127.0.0.1:{port}",
        "PAYFLOW_REQUEST_TIMEOUT": "2",
    }
    for command in _commands(files, batch_id):
        done = run_payflow(command, closed, tmp_path)
        _one_line(done, command, UNREACHABLE, (env["PAYFLOW_API_TOKEN"], "pw-9876", str(port)))
