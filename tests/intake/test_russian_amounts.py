"""Russian Excel CSVs (`;`, cp1251): `1 500,50` is read as 1500.50, only in that form, and the
summary says so (issue 7, item 8)."""

from __future__ import annotations

from pathlib import Path

from intake_files import HEADER, ROW, write_csv

from payflow.intake import read_batch_file
from payflow.intake.lookups import ServiceInfo
from payflow.intake.report_files import summary_lines
from payflow.schemas.validation import validate_rows

SERVICES = [ServiceInfo(201, "SIM", "XOF")]
AMOUNTS = {
    "1 500,50": "1500.50",
    "1\u00a0500,50": "1500.50",
    "12 345 675": "12345675",
    "1500,5": "1500.5",
    "1500": "1500",
    "1500.25": "1500.25",
}


def _rows(amounts: list[str]) -> list[list[str]]:
    return [
        [amount, "RUB", "BANK_ACCOUNT", "Иванов Иван", "Иванов Иван", f"u-{n}", f"x-{n}"]
        for n, amount in enumerate(amounts)
    ]


def test_semicolon_cp1251_file_reads_decimal_commas_and_space_groups(tmp_path: Path) -> None:
    path = write_csv(
        tmp_path / "b.csv", [HEADER, *_rows(list(AMOUNTS))], sep=";", encoding="cp1251"
    )
    raw = read_batch_file(path)
    assert raw.frame["amount"].tolist() == list(AMOUNTS.values())
    encoding, notice = raw.notices
    assert encoding.rule == "read_as_windows_1251"
    assert notice.rule == "amount_decimal_comma" and notice.message.startswith("4 amount(s)")


def test_the_summary_says_amounts_were_read_with_a_decimal_comma(tmp_path: Path) -> None:
    rows = [["1 500", *ROW[1:]], ["2 000,00", *ROW[1:5], "u-2", "x-2"]]
    report = validate_rows(
        read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, *rows], sep=";")),
        services=SERVICES,
        banks_for_phones=None,
    )
    assert report.rejects == [] and [str(i.amount) for i in report.instructions] == [
        "1500",
        "2000.00",
    ]
    assert any("1 500,50 read as 1500.50" in line for line in summary_lines(report))


def test_never_guessed_in_other_forms_or_files(tmp_path: Path) -> None:
    semicolon = read_batch_file(
        write_csv(tmp_path / "a.csv", [HEADER, *_rows(["1,500", "1 50,00", "1.500,00"])], sep=";")
    )
    assert semicolon.frame["amount"].tolist() == ["1,500", "1 50,00", "1.500,00"]
    assert semicolon.notices == []
    comma = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, *_rows(["1 500,50"])]))
    assert comma.frame["amount"].tolist() == ["1 500,50"] and comma.notices == []
    report = validate_rows(comma, services=SERVICES, banks_for_phones=None)
    assert {p.rule for p in report.rejects if p.column == "amount"} == {"amount_format"}


def test_a_point_between_thousands_is_named_not_called_a_rounding_artefact(tmp_path: Path) -> None:
    # Found by hand: `1.500` in a `;` file (German or Italian Excel's 1500) was rejected as "a
    # spreadsheet rounding artefact: round the cell to cents", which the operator never made.
    amounts = ["1.500", "1.500,50", "12.345.678", "2.050"]
    path = write_csv(tmp_path / "b.csv", [HEADER, *_rows(amounts)], sep=";")
    report = validate_rows(read_batch_file(path), services=SERVICES, banks_for_phones=None)
    amount_rejects = [(p.row, p.rule, p.message) for p in report.rejects if p.column == "amount"]
    assert amount_rejects == [
        (
            2,
            "amount_thousands_point",
            "amount 1.500: a point before three digits is how German or Italian Excel writes "
            "1500, but it also reads as 1.5; payflow does not guess: write 1500 or 1,5",
        ),
        (
            3,
            "amount_thousands_point",
            "amount 1.500,50 has a point between thousands: write it 1500,50 or 1 500,50",
        ),
        (
            4,
            "amount_thousands_point",
            "amount 12.345.678 has a point between thousands: write it 12345678 or 12 345 678",
        ),
        (
            5,
            "amount_thousands_point",
            "amount 2.050: a point before three digits is how German or Italian Excel writes "
            "2050, but it also reads as 2.05; payflow does not guess: write 2050 or 2,05",
        ),
    ]
    assert report.instructions == []
    # In a `,` file a point is a decimal point: three decimals are too many, as before.
    comma = read_batch_file(write_csv(tmp_path / "c.csv", [HEADER, *_rows(["1.500"])]))
    report = validate_rows(comma, services=SERVICES, banks_for_phones=None)
    assert [p.rule for p in report.rejects if p.column == "amount"] == ["amount_decimals"]
