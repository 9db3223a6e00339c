"""`payflow validate` end to end against the embedded sandbox: exit codes, JSON, report files."""

from __future__ import annotations

import csv
import json
from pathlib import Path

import pytest

from payflow.cli import main

DATA = Path(__file__).resolve().parents[2] / "data"


@pytest.fixture(autouse=True)
def _sandbox_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)  # no stray .env is read
    monkeypatch.delenv("PAYFLOW_API_URL", raising=False)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))


def run(*args: str) -> int:
    with pytest.raises(SystemExit) as ended:
        main(["validate", *args])
    return int(ended.value.code or 0)


def test_clean_batch_exits_0_with_the_json_shape(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(str(DATA / "batch_clean.csv"), "--json", "--out", str(tmp_path)) == 0
    captured = capsys.readouterr()
    summary = json.loads(captured.out)
    assert set(summary) == {
        "batch_id",
        "rows",
        "valid",
        "rejected",
        "problems",
        "warnings",
        "sandbox",
    }
    assert (summary["rows"], summary["valid"], summary["rejected"]) == (5, 5, 0)
    assert summary["sandbox"] is True
    assert summary["problems"] == []
    assert "no real money moved" in captured.err


def test_error_batch_exits_1_and_names_each_row_s_rule(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    assert run(str(DATA / "batch_errors.csv"), "--json", "--out", str(tmp_path)) == 1
    summary = json.loads(capsys.readouterr().out)
    with (DATA / "batch_errors.csv").open(encoding="utf-8", newline="") as handle:
        expected = {
            n: record["note"].removeprefix("expect ")
            for n, record in enumerate(csv.DictReader(handle), start=2)
        }
    found: dict[int, set[str]] = {}
    for problem in summary["problems"]:
        assert set(problem) == {"row", "column", "rule", "message"}
        found.setdefault(problem["row"], set()).add(problem["rule"])
    assert found == {row: {rule} for row, rule in expected.items()}
    assert summary["rejected"] == summary["rows"] == len(expected)


def test_report_files_mask_requisites(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert run(str(DATA / "batch_errors.csv"), "--out", str(tmp_path / "out")) == 1
    out = capsys.readouterr().out
    assert "rejected" in out and "report:" in out
    (report_csv,) = (tmp_path / "out").glob("*-rejects.csv")
    assert (tmp_path / "out" / report_csv.name.replace(".csv", ".xlsx")).exists()
    text = report_csv.read_text("utf-8-sig")
    assert text.splitlines()[0] == "row,externalId,column,rule,message,value,severity"
    assert "2250700001234" not in text and "*********1234" in text
    assert "2250700001234" not in out


def test_xlsx_with_sheet_and_strict(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert (
        run(
            str(DATA / "batch_clean.xlsx"), "--sheet", "payouts", "--strict", "--out", str(tmp_path)
        )
        == 0
    )
    assert "5 valid" in capsys.readouterr().out


@pytest.mark.parametrize(
    ("content", "message"),
    [(b"", "is empty"), (b"amount;currency\n1;XOF\n", "required column missing")],
)
def test_unreadable_file_exits_2_with_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], content: bytes, message: str
) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    assert run(str(path), "--json") == 2
    captured = capsys.readouterr()
    assert captured.out == ""
    assert captured.err.count("\n") == 1 and message in captured.err
    assert "Traceback" not in captured.err
