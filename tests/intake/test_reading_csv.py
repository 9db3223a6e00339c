"""Reading CSV batches: delimiters, encodings, headers, blank rows, unreadable files."""

from __future__ import annotations

from dataclasses import replace
from pathlib import Path

import pytest
from intake_files import HEADER, ROW, write_csv

from payflow.intake import BatchFileError, read_batch_file, reading
from payflow.intake.limits import ReadLimits


def test_comma_file_reads_every_cell_as_text(tmp_path: Path) -> None:
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, ROW, ["007", *ROW[1:6], "x-2"]]))
    assert raw.frame.loc[2].tolist() == ROW
    assert raw.frame.at[3, "amount"] == "007"  # not parsed, not stripped of zeros
    assert raw.frame.index.tolist() == [2, 3]


def test_semicolon_file_keeps_commas_inside_cells(tmp_path: Path) -> None:
    row = ["1500", *ROW[1:4], "Doe, John", *ROW[5:]]
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, row], sep=";"))
    assert raw.frame.at[2, "amount"] == "1500"
    assert raw.frame.at[2, "name"] == "Doe, John"


def test_utf8_with_bom(tmp_path: Path) -> None:
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, ROW], encoding="utf-8-sig"))
    assert list(raw.frame.columns) == HEADER


@pytest.mark.parametrize("misread", ["cp1252", "cp1251"])
def test_a_file_saved_after_opening_it_in_the_wrong_encoding_is_refused(
    tmp_path: Path, misread: str
) -> None:
    # Found by hand: LibreOffice converted a UTF-8 CSV with a BOM read as Windows-1252; the
    # header 'ï»¿externalId' went unrecognised, so rows were to be paid under derived ids, and
    # every Cyrillic name read 'Ð˜Ð²Ð°Ð½'.
    header = ["externalId", *HEADER[:-1]]
    row = ["x-1", *ROW[:4], "Иван", *ROW[5:-1]]
    garbled = [
        [cell.encode("utf-8").decode(misread, errors="replace") for cell in line]
        for line in (header, row)
    ]
    garbled[0][0] = "\ufeff".encode().decode(misread) + garbled[0][0]
    with pytest.raises(BatchFileError, match="opened in the wrong encoding and saved again"):
        read_batch_file(write_csv(tmp_path / "b.csv", garbled))


def test_cp1251_from_russian_excel(tmp_path: Path) -> None:
    row = [*ROW[:4], "Пётр Сидоров", *ROW[5:]]
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, row], sep=";", encoding="cp1251"))
    assert raw.frame.at[2, "name"] == "Пётр Сидоров"
    # Said, since a Latin-1 file reads as Windows-1251 too and turns "Jöhn" into "Jцhn".
    assert [notice.rule for notice in raw.notices] == ["read_as_windows_1251"]
    assert "Jöhn as Jцhn" in raw.notices[0].message
    utf8 = read_batch_file(write_csv(tmp_path / "u.csv", [HEADER, row], sep=";"))
    assert utf8.notices == []


def test_a_windows_1251_file_whose_only_cyrillic_is_on_its_last_row(tmp_path: Path) -> None:
    # The parser's own strict decoding is the UTF-8 check, so a file that turns out not to be
    # UTF-8 far into the parse is read again whole as Windows-1251, not cut where it failed.
    rows = [[*ROW[:6], f"x-{n}"] for n in range(20_000)]
    rows[-1] = [*ROW[:4], "Пётр Сидоров", ROW[5], "x-last"]
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, *rows], encoding="cp1251"))
    assert len(raw.frame) == 20_000
    assert raw.frame.iloc[-1]["name"] == "Пётр Сидоров"
    assert [notice.rule for notice in raw.notices] == ["read_as_windows_1251"]


@pytest.mark.parametrize(
    "headers",
    [
        ["Amount", "CURRENCY", "payment_type", "Requisites", "NAME", "user_id", "External ID"],
        ["amount", "currency", "PaymentType", "requisites", "name", "userID", "external-id"],
    ],
)
def test_headers_in_other_cases_and_forms(tmp_path: Path, headers: list[str]) -> None:
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [headers, ROW]))
    assert list(raw.frame.columns) == HEADER


def test_unknown_columns_are_reported(tmp_path: Path) -> None:
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [[*HEADER, "Comment"], [*ROW, "hi"]]))
    assert raw.unknown_columns == ("Comment",)
    assert "Comment" not in raw.frame


def test_a_column_with_values_and_no_header_is_reported_by_position(tmp_path: Path) -> None:
    # A serviceId whose header was forgotten was not read, and said nothing: its rows went
    # through the merchant's default service. An empty column with no header is no news.
    rows = [[*HEADER, "", ""], [*ROW, "201", ""], [*ROW[:6], "x-2", "", ""]]
    raw = read_batch_file(write_csv(tmp_path / "b.csv", rows))
    position = len(HEADER) + 1
    assert raw.unknown_columns == (f"column {position} (no header, 1 value)",)
    assert list(raw.frame.columns) == HEADER


def test_blank_rows_are_ignored_and_row_numbers_kept(tmp_path: Path) -> None:
    blank = [""] * len(HEADER)
    path = write_csv(tmp_path / "b.csv", [HEADER, ROW, blank, [*ROW[:6], "x-2"], blank, blank])
    raw = read_batch_file(path)
    assert raw.frame.index.tolist() == [2, 4]


def test_a_multi_line_cell_is_one_spreadsheet_row(tmp_path: Path) -> None:
    rows = [HEADER, [*ROW[:4], "two\nlines", *ROW[5:]], [*ROW[:6], "x-2"]]
    raw = read_batch_file(write_csv(tmp_path / "b.csv", rows))
    assert raw.frame.index.tolist() == [2, 3]
    assert raw.frame.at[2, "name"] == "two\nlines"


def _cr_lines(path: Path, lines: list[str]) -> Path:
    """A CSV whose lines end in a lone CR, as classic Mac programs and some exports save it."""
    path.write_bytes(("\r".join(lines) + "\r").encode("utf-8"))
    return path


def test_a_stray_quote_in_a_file_with_cr_line_ends_is_refused(tmp_path: Path) -> None:
    # Found by hand: the file was counted as one line, so the check for a quote swallowing rows
    # never ran, and rows 3 and 4 vanished into row 2's name: 2 rows read of 4, none reported.
    lines = [",".join(HEADER)] + [",".join([*ROW[:6], f"x-{n}"]) for n in range(1, 5)]
    lines[1] = lines[1].replace("Kouadio", '"Kouadio')
    lines[3] = lines[3].replace("Kouadio", 'Kouadio"')
    with pytest.raises(BatchFileError, match="row 2, column 'name' opens a quote that runs over"):
        read_batch_file(_cr_lines(tmp_path / "b.csv", lines))


def test_a_file_with_cr_line_ends_is_read_line_by_line(tmp_path: Path) -> None:
    # Found by hand: its first line was the whole file, so 100 rows read as a header of 607
    # columns, "more than 200 (PAYFLOW_MAX_COLUMNS)".
    lines = [",".join(HEADER)] + [",".join([*ROW[:6], f"x-{n}"]) for n in range(100)]
    raw = read_batch_file(_cr_lines(tmp_path / "b.csv", lines))
    assert raw.frame.index.tolist() == list(range(2, 102))
    assert raw.frame["externalId"].tolist() == [f"x-{n}" for n in range(100)]
    limits = ReadLimits(max_rows=99, max_columns=200, max_cell_chars=32_767, max_blank_rows=10)
    with pytest.raises(BatchFileError, match="more than 99 data rows"):
        read_batch_file(tmp_path / "b.csv", limits=limits)


def test_batch_id_depends_on_content_only(tmp_path: Path) -> None:
    first = read_batch_file(write_csv(tmp_path / "a.csv", [HEADER, ROW]))
    same = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, ROW]))
    other = read_batch_file(write_csv(tmp_path / "c.csv", [HEADER, [*ROW[:6], "x-9"]]))
    assert first.batch_id == same.batch_id != other.batch_id
    assert len(first.batch_id) == 20


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "is empty"),
        (b"\n\n", "is empty"),
        (
            b"amount,currency\n1,XOF\n",
            "required column missing: paymentType, requisites, name, userId",
        ),
        (",".join(HEADER).encode() + b"\n", "no data rows"),
        (b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "neither CSV nor XLSX"),
        # Found by hand: Excel's "Unicode Text" and a UTF-16 CSV were "neither CSV nor XLSX".
        (("\ufeff" + "\t".join(HEADER) + "\r\n").encode("utf-16-le"), "is UTF-16 text"),
        ((",".join(HEADER) + "\r\n").encode("utf-16-be"), "save it as 'CSV UTF-8"),
        (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + b"\x00" * 64, "password-protected"),
        (b"PK\x03\x04 broken zip", "corrupt"),
        ((",".join(HEADER) + ",externalId\n").encode(), "given more than once"),
    ],
)
def test_unreadable_files_fail_with_one_line(tmp_path: Path, content: bytes, message: str) -> None:
    path = tmp_path / "bad.csv"
    path.write_bytes(content)
    with pytest.raises(BatchFileError, match=message) as caught:
        read_batch_file(path)
    assert "\n" not in str(caught.value)


def test_missing_file(tmp_path: Path) -> None:
    with pytest.raises(BatchFileError, match=r"nope\.csv does not exist$"):
        read_batch_file(tmp_path / "nope.csv")


LIMITS = ReadLimits(max_rows=100, max_columns=50, max_cell_chars=40, max_blank_rows=10)


def test_cell_over_the_limit_is_refused_with_its_row_and_column(tmp_path: Path) -> None:
    row = [*ROW[:4], "N" * 41, *ROW[5:]]
    path = write_csv(tmp_path / "b.csv", [HEADER, ROW, row])
    with pytest.raises(BatchFileError, match="row 3, column 'name' holds 41 characters"):
        read_batch_file(path, limits=LIMITS)


def test_long_cell_spread_over_short_lines_is_refused_too(tmp_path: Path) -> None:
    # No line passes the limit (the header's 61 bytes are the longest), but the quoted cell
    # does: the per-cell check must still run.
    row = [*ROW[:4], "\n".join(["N" * 9] * 9), *ROW[5:]]
    path = write_csv(tmp_path / "b.csv", [HEADER, row])
    limits = replace(LIMITS, max_cell_chars=70)
    assert max(len(line) + 1 for line in path.read_bytes().split(b"\n")) <= 70
    with pytest.raises(BatchFileError, match="row 2, column 'name' holds 89 characters"):
        read_batch_file(path, limits=limits)


def test_cell_at_the_limit_on_a_longer_line_is_read(tmp_path: Path) -> None:
    row = [*ROW[:4], "N" * 40, *ROW[5:]]
    raw = read_batch_file(write_csv(tmp_path / "b.csv", [HEADER, row]), limits=LIMITS)
    assert raw.frame.at[2, "name"] == "N" * 40


@pytest.mark.parametrize("scan_bytes", [1, 3, 7, 1 << 24])
def test_longest_line_counts_bytes_with_the_break_across_scan_slices(
    monkeypatch: pytest.MonkeyPatch, scan_bytes: int
) -> None:
    monkeypatch.setattr(reading, "_LINE_SCAN_BYTES", scan_bytes)
    assert reading._longest_line(b"") == 0
    assert reading._longest_line(b"ab\ncdef\ng") == 5
    assert reading._longest_line(b"ab\ncd\nefghij") == 6
    assert reading._longest_line("ё\n".encode()) == 3  # bytes, not characters


def test_a_file_holding_only_a_byte_order_mark_is_empty(tmp_path: Path) -> None:
    # The parser's own words reached the operator: "No columns to parse from file".
    path = tmp_path / "bom.csv"
    path.write_bytes(b"\xef\xbb\xbf")
    with pytest.raises(BatchFileError, match=r"^bom.csv is empty$"):
        read_batch_file(path)
