"""A bad PAYFLOW_API_URL or PAYFLOW_LEDGER_URL is one line naming the setting, exit 2 (issue 7,
item 14); an API that is down before anything was registered is not reported as resumable."""

from __future__ import annotations

import logging
import os
import subprocess
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow, write_sim_batch
from support.servers import free_port

from payflow.cli import main
from payflow.settings import SANDBOX_TOKEN_DEFAULT

Payflow = Callable[..., subprocess.CompletedProcess[str]]


def _one_line(stderr: str) -> str:
    lines = [line for line in stderr.strip().splitlines() if line.strip()]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "unexpected error" not in stderr
    return lines[0]


@pytest.fixture
def payflow(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> Iterator[Payflow]:
    """`payflow(args, env, cwd, in_process=...)`: the real `payflow` subprocess, or the same
    `payflow.cli.main(args)` called in this process with the operator's environment, its exit
    code and output read the same way.

    Each refusal here comes before any work; a subprocess costs 1-2 s of CPU to load the command,
    so each message is seen once from a real process (the stderr an operator reads) and its other
    cases in process. What `main` leaves in the process (the environment Prefect's defaults go
    into, the umask, the log file's handler) is put back."""
    environ, umask = dict(os.environ), os.umask(0o077)
    os.umask(umask)
    root = logging.getLogger()
    handlers = list(root.handlers)
    levels = {name: logging.getLogger(name).level for name in ("payflow", "httpx")}

    def run(
        args: list[str], env: dict[str, str], cwd: Path, *, in_process: bool, timeout: float = 240
    ) -> subprocess.CompletedProcess[str]:
        if not in_process:
            return run_payflow(args, env, cwd, timeout=timeout)
        os.environ.clear()
        os.environ.update(env)
        monkeypatch.chdir(cwd)
        capsys.readouterr()
        with pytest.raises(SystemExit) as ended:
            main(args)
        seen = capsys.readouterr()
        code = ended.value.code
        returncode = code if isinstance(code, int) else (0 if code is None else 1)
        return subprocess.CompletedProcess(args, returncode, seen.out, seen.err)

    try:
        yield run
    finally:
        os.environ.clear()
        os.environ.update(environ)
        os.umask(umask)
        for handler in set(root.handlers) - set(handlers):
            root.removeHandler(handler)
            handler.close()
        for name, level in levels.items():
            logging.getLogger(name).setLevel(level)


@pytest.fixture
def batch(tmp_path: Path) -> Path:
    path = tmp_path / "batch.csv"
    write_sim_batch(path, 2, "settings")
    return path


@pytest.mark.parametrize("api_url", ["localhost:8080", "ftp://api.example.com", "https://h:99999"])
@pytest.mark.parametrize("command", ["run", "validate"])
def test_a_bad_api_url_names_the_setting(tmp_path, payflow, batch, api_url, command):
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=api_url,
        PAYFLOW_API_TOKEN="t",
    )
    args = [command, str(batch), *(["--yes"] if command == "run" else [])]
    in_process = (api_url, command) != ("localhost:8080", "run")
    done = payflow(args, env, tmp_path, in_process=in_process)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith("payflow: bad setting PAYFLOW_API_URL: "), line


@pytest.mark.parametrize(
    ("ledger_url", "reason", "command"),
    [
        ("not a url", "is not a database URL", "status"),
        ("mysql://u@h/db", "use sqlite or postgresql", "run"),
        ("sqlite://", "in-memory", "status"),
        (
            "postgresql+psycopg://postgres@127.0.0.1:{port}/x?connect_timeout=3",
            "cannot open",
            "run",
        ),
        ("sqlite:////proc/no-such-dir/ledger.sqlite3", "cannot open", "status"),
        # postgresql:// alone meant psycopg2, not installed: "unexpected error" (issue 36).
        ("postgresql://postgres@127.0.0.1:{port}/x?connect_timeout=3", "cannot open", "status"),
        ("postgresql+asyncpg://u@127.0.0.1/x", "which is not installed", "status"),
    ],
)
def test_a_bad_ledger_url_names_the_setting(tmp_path, payflow, batch, ledger_url, reason, command):
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_LEDGER_URL=ledger_url.format(port=free_port()),
    )
    args = ["run", str(batch), "--yes"] if command == "run" else ["status", "some-batch"]
    done = payflow(args, env, tmp_path, in_process=ledger_url != "not a url")
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "PAYFLOW_LEDGER_URL" in line and reason in line, line


def test_an_empty_api_url_is_unset_and_the_embedded_sandbox_serves(tmp_path, batch):
    # PAYFLOW_API_URL="" was refused as a bad URL (issue 36), where a blank .env line is unset.
    env = payflow_env(tmp_path / "home", tmp_path / "prefect", PAYFLOW_API_URL="")
    done = run_payflow(["validate", str(batch)], env, tmp_path)
    assert done.returncode == 0, done.stderr
    assert "embedded sandbox served" in done.stderr


def test_an_api_that_is_down_before_registering_is_not_called_resumable(tmp_path, batch):
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_API_URL=f"http://127.0.0.1:{free_port()}",
        PAYFLOW_API_TOKEN=SANDBOX_TOKEN_DEFAULT,
        PAYFLOW_REQUEST_TIMEOUT="2",
    )
    done = run_payflow(["run", str(batch), "--yes"], env, tmp_path)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert "PAYFLOW_API_URL" in line and "nothing was registered or paid" in line, line
    assert "every row is in the ledger" not in line


@pytest.mark.parametrize(
    "args",
    [
        ["reconcile", "b1"],
        ["findings", "b1"],
        ["approve", "b1"],
        ["rerun", "b1"],
        ["pay", "b1"],
        ["webhooks", "--port", "{port}"],
        ["status"],
        ["status", "b1"],
        ["refund", "{refunds}", "--yes"],
        ["links", "{links}"],
        ["links", "--reissue", "b1"],
        ["links", "report", "b1"],
        ["links", "serve", "--port", "{port}"],
    ],
    ids=lambda args: "-".join(arg for arg in args[:2] if not arg.startswith("{")),
)
def test_every_ledger_command_names_a_ledger_it_cannot_reach_in_one_line(tmp_path, payflow, args):
    # Several commands opened the ledger themselves and ended in "unexpected error" (refund and
    # the links commands until 2026-11-26).
    refunds, links = tmp_path / "refunds.csv", tmp_path / "links.csv"
    refunds.write_text("orderId\n6f1c1c2e-8f5e-4a55-9a43-1d1f2c3b4a5e\n", encoding="utf-8")
    links.write_text("externalId,userId,amount\nx1,u1,100\n", encoding="utf-8")
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        PAYFLOW_LEDGER_URL=(
            f"postgresql+psycopg://postgres:pw-not-shown@127.0.0.1:{free_port()}/x"
            "?connect_timeout=3"
        ),
    )
    named = {"port": free_port(), "refunds": refunds, "links": links}
    args = [arg.format(**named) for arg in args]
    done = payflow(args, env, tmp_path, in_process=args != ["status", "b1"])
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith("payflow: configuration: PAYFLOW_LEDGER_URL: cannot open"), line
    assert "pw-not-shown" not in done.stdout + done.stderr


FILE_COMMANDS = [["validate"], ["run", "--yes"], ["refund", "--yes"], ["links"]]


def _named(tmp_path: Path, kind: str) -> tuple[Path, str]:
    """A path of `kind` that is no file to read, and the one line each command answers it with."""
    path = tmp_path / "march.csv"
    if kind == "folder":
        path.mkdir()
        return path, f"payflow: {path} is a folder, not a file: name a file in it"
    if kind == "fifo":  # opened as a file, it waited for a writer for ever
        os.mkfifo(path)
        return path, (
            f"payflow: {path} is a named pipe (FIFO), not a file: save what it carries to a file "
            "and name that"
        )
    if kind == "empty":
        path.write_bytes(b"")
        return path, "payflow: march.csv is empty"
    return path, f"payflow: {path} does not exist"


@pytest.mark.parametrize("kind", ["missing", "folder", "fifo", "empty"])
@pytest.mark.parametrize("command", FILE_COMMANDS, ids=lambda command: command[0])
def test_a_path_that_is_no_file_is_one_line_before_anything_starts(
    tmp_path, payflow, command, kind
):
    # `payflow run` started Prefect and the embedded sandbox first, and said so, 15 s before
    # saying the file was not there; `payflow run /tmp` said "cannot read tmp: Is a directory",
    # and a named pipe held every command for ever.
    path, line = _named(tmp_path, kind)
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    args = [command[0], str(path), *command[1:]]
    # `run` is the one that started servers first: each message from it in a real process.
    done = payflow(args, env, tmp_path, in_process=command[0] != "run", timeout=60)
    assert done.returncode == 2
    assert done.stderr == line + "\n"
    assert not (tmp_path / "home" / "ledger.sqlite3").exists()


@pytest.mark.parametrize(
    "args",
    [
        ["run", "{batch}", "--yes"],
        ["refund", "{refunds}", "--yes"],
        ["links", "{links}"],
        ["pay", "b1"],
        ["reconcile", "b1"],
        ["links", "report", "b1"],
        ["validate", "{unreadable}"],
    ],
    ids=lambda args: "-".join(arg for arg in args[:2] if not arg.startswith("{")),
)
def test_an_out_folder_that_cannot_be_written_stops_before_anything_is_sent(
    tmp_path, payflow, batch, args
):
    # `payflow run --out /proc/nope` paid its rows, then ended in "unexpected error", exit 2;
    # validate said so only after reading its file (here one it refuses), and every command
    # said "File exists" of a file named as the folder.
    refunds, links, taken = tmp_path / "refunds.csv", tmp_path / "links.csv", tmp_path / "taken"
    refunds.write_text("orderId\n6f1c1c2e-8f5e-4a55-9a43-1d1f2c3b4a5e\n", encoding="utf-8")
    links.write_text("externalId,userId,amount\nx1,u1,100\n", encoding="utf-8")
    taken.write_text("a file, not a folder", encoding="utf-8")
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    unreadable = tmp_path / "unreadable.csv"
    unreadable.write_text("externalId,amount\nx1,100\n", encoding="utf-8")
    named = {"batch": batch, "refunds": refunds, "links": links, "unreadable": unreadable}
    line_args = [*(a.format(**named) for a in args), "--out", str(taken)]
    done = payflow(line_args, env, tmp_path, in_process=args[0] != "run")
    assert done.returncode == 2
    line = f"payflow: {taken} is a file, not a folder: name a folder for the report"
    assert _one_line(done.stderr) == line
    assert not (tmp_path / "home" / "ledger.sqlite3").exists()


@pytest.mark.parametrize("command", ["status", "webhooks"])
def test_a_json_setting_that_does_not_parse_is_one_line(tmp_path, payflow, command):
    # pydantic-settings' own error (not a ValidationError) showed a whole traceback, exit 1.
    env = payflow_env(
        tmp_path / "home", tmp_path / "prefect", PAYFLOW_STUCK_AFTER_MINUTES='{"SBP": 0'
    )
    args = ["status"] if command == "status" else ["webhooks", "--port", str(free_port())]
    done = payflow(args, env, tmp_path, in_process=command != "status")
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith("payflow: bad setting PAYFLOW_STUCK_AFTER_MINUTES: not valid JSON"), line


@pytest.mark.parametrize("command", [["run", "--yes"], ["refund", "--yes"]], ids=lambda c: c[0])
def test_a_file_refused_for_its_content_says_only_that(tmp_path, payflow, command):
    # On the embedded sandbox the run said "sandbox: ... no real money moved" above the file's
    # error: a line about money for a run that never started. It is said once paying starts.
    path = tmp_path / "march.csv"
    path.write_text("externalId,amount\nx1,100\n", encoding="utf-8")
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    args = [command[0], str(path), *command[1:]]
    done = payflow(args, env, tmp_path, in_process=command[0] != "run", timeout=120)
    assert done.returncode == 2
    line = _one_line(done.stderr)
    assert line.startswith("payflow: march.csv: required column missing: "), line


def test_paying_a_batch_the_ledger_does_not_hold_says_only_that(tmp_path):
    # It said "sandbox: ... no real money moved" first, of a run that never started.
    env = payflow_env(tmp_path / "home", tmp_path / "prefect")
    done = run_payflow(["pay", "nosuchbatch"], env, tmp_path, timeout=120)
    assert done.returncode == 2
    assert _one_line(done.stderr).startswith("payflow: no batch 'nosuchbatch' in the ledger ")
