"""A slow start of Prefect's temporary server waits a setting's time and ends in one line naming
it (issue 36, item 8): under load `payflow links` ended "unexpected error (RuntimeError)"
("Timed out while attempting to connect to ephemeral Prefect API server")."""

from __future__ import annotations

from pathlib import Path

import pytest
from cli_support import payflow_env, run_payflow

import payflow.cli.links as links_cli
from payflow.cli import main
from payflow.prefect_server import PREFECT_TIMED_OUT, TIMEOUT_SETTING


def _one_line(stderr: str) -> str:
    # The embedded sandbox's line comes first, as for every links file: then the one line.
    lines = [line for line in stderr.strip().splitlines() if not line.startswith("sandbox: ")]
    assert len(lines) == 1, stderr
    assert "Traceback" not in stderr and "unexpected error" not in stderr, stderr
    return lines[0]


def test_links_waits_the_setting_then_names_it(tmp_path: Path) -> None:
    links = tmp_path / "links.csv"
    links.write_text("externalId,userId,amount\nx1,u1,100\n", encoding="utf-8")
    # No time at all to start (Prefect's setting is whole seconds): the slow start, every time.
    env = payflow_env(
        tmp_path / "home",
        tmp_path / "prefect",
        temporary_prefect=True,
        **{TIMEOUT_SETTING: "0"},
    )
    done = run_payflow(["links", str(links)], env, tmp_path)
    assert done.returncode == 2, done.stdout + done.stderr
    line = _one_line(done.stderr)
    assert line.startswith("payflow: Prefect's temporary server did not start within 0 s"), line
    assert TIMEOUT_SETTING in line and "nothing was sent" in line


def test_prefect_s_own_timeout_is_one_line_naming_the_setting(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    # Any command whose flow started Prefect's own temporary server: its RuntimeError.
    def slow(*args: object, **kwargs: object) -> None:
        raise RuntimeError(PREFECT_TIMED_OUT)

    monkeypatch.chdir(tmp_path)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))
    monkeypatch.setenv(TIMEOUT_SETTING, "45")
    monkeypatch.setattr(links_cli, "_run_flow", slow)
    links = tmp_path / "links.csv"
    links.write_text("externalId,userId,amount\nx1,u1,100\n", encoding="utf-8")
    with pytest.raises(SystemExit) as ended:
        main(["links", str(links)])
    assert ended.value.code == 2
    line = _one_line(capsys.readouterr().err)
    assert "did not start within 45 s" in line and TIMEOUT_SETTING in line, line
