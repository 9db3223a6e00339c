"""`payflow template` writes batches whose example rows validate, and the docs' columns table
(docs/columns.md) is the one the rules table gives (issue 7, item 9)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest
from openpyxl import load_workbook

from payflow.cli import main
from payflow.schemas.columns_doc import EXAMPLES, columns_markdown
from payflow.schemas.rules import load_rules

COLUMNS_PAGE = Path(__file__).resolve().parents[2] / "docs" / "columns.md"


@pytest.fixture(autouse=True)
def _sandbox_settings(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.chdir(tmp_path)
    monkeypatch.delenv("PAYFLOW_API_URL", raising=False)
    monkeypatch.setenv("PAYFLOW_HOME", str(tmp_path / "home"))


def run(*args: str) -> int:
    with pytest.raises(SystemExit) as ended:
        main(list(args))
    return int(ended.value.code or 0)


@pytest.mark.parametrize("form", ["--xlsx", "--csv"])
def test_every_example_row_of_the_template_validates(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], form: str
) -> None:
    path = tmp_path / f"t{'.csv' if form == '--csv' else '.xlsx'}"
    assert run("template", form, "--out", str(path)) == 0
    capsys.readouterr()
    # Each example passes every rule but one: left in a filled-in template, it is never paid.
    assert run("validate", str(path), "--json", "--out", str(tmp_path / "out")) == 1
    summary = json.loads(capsys.readouterr().out)
    assert (summary["rows"], summary["valid"]) == (len(EXAMPLES), 0)
    assert {(p["row"], p["rule"]) for p in summary["problems"]} == {
        (row, "template_example") for row in range(2, 2 + len(EXAMPLES))
    }
    # With the example's externalId replaced by the operator's own, the row is valid.
    text = path.read_text("utf-8") if form == "--csv" else None
    if text is not None:
        path.write_text(text.replace("example-sbp-1", "march-sbp-1"), "utf-8")
        assert run("validate", str(path), "--json", "--out", str(tmp_path / "out")) == 1
        summary = json.loads(capsys.readouterr().out)
        assert summary["valid"] == 1


def test_the_template_never_writes_over_a_file(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    filled = tmp_path / "march.xlsx"
    filled.write_bytes(b"an operator's filled-in batch")
    assert run("template", "--out", str(filled)) == 2
    assert "march.xlsx already exists" in capsys.readouterr().err
    assert filled.read_bytes() == b"an operator's filled-in batch"
    # A folder is named as such, in one line: it read "already exists; give another --out".
    assert run("template", "--out", str(tmp_path)) == 2
    said = capsys.readouterr().err
    assert said == (
        f"payflow: {tmp_path} is a folder: name the file to write in it, such as "
        f"{tmp_path / 'payflow-template.xlsx'}\n"
    )


def test_the_xlsx_template_has_notes_and_list_validation(tmp_path: Path) -> None:
    path = tmp_path / "t.xlsx"
    assert run("template", "--type", "SBP,SIM", "--out", str(path)) == 0
    workbook = load_workbook(path)
    assert workbook.sheetnames == ["payouts", "notes"]
    payouts = workbook["payouts"]
    assert [row[2] for row in payouts.iter_rows(min_row=2, max_row=3, values_only=True)] == [
        "SBP",
        "SIM",
    ]
    lists = {str(v.sqref): v.formula1 for v in payouts.data_validations.dataValidation}
    assert lists["C2:C1001"] == '"BANK_ACCOUNT,EMAIL,SBP,SIM"'
    assert "RUB" in lists["B2:B1001"] and "XOF" in lists["B2:B1001"]
    notes = [row[0] for row in workbook["notes"].iter_rows(min_row=2, values_only=True)]
    assert "externalId" in notes and "bik" in notes


def test_an_unknown_type_is_refused_in_one_line(capsys: pytest.CaptureFixture[str]) -> None:
    assert run("template", "--type", "CARD") == 2
    assert capsys.readouterr().err.strip().count("\n") == 0


@pytest.mark.parametrize(
    ("args", "name"),
    [(["--csv", "--out", "t.xlsx"], "t.csv"), (["--xlsx", "--out", "t.csv"], "t.xlsx")],
)
def test_a_file_named_for_the_other_kind_is_refused_in_one_line(
    tmp_path: Path, capsys: pytest.CaptureFixture[str], args: list[str], name: str
) -> None:
    # `template --csv --out t.xlsx` wrote a CSV named .xlsx (issue 36, item 9).
    assert run("template", *args) == 2
    line = capsys.readouterr().err.strip()
    assert "\n" not in line and f"name it {name}" in line, line
    assert not (tmp_path / args[-1]).exists()


def test_an_out_name_alone_chooses_the_kind(tmp_path: Path) -> None:
    assert run("template", "--out", "mine.csv") == 0
    assert (tmp_path / "mine.csv").read_text("utf-8-sig").startswith("amount,")


def test_the_docs_columns_table_is_the_generated_one() -> None:
    text = COLUMNS_PAGE.read_text("utf-8")
    inside = text.split("<!-- columns:start -->\n", 1)[1].split("<!-- columns:end -->", 1)[0]
    assert inside == columns_markdown(load_rules()), (
        "docs/columns.md is stale: run `.venv/bin/python -m payflow.docs_pages`"
    )
