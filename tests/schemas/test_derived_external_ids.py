"""A derived externalId depends on its own row only (issue 7, item 1; design.md invariant 2).

Without an externalId (no column, or a blank cell) a row's id comes from its recipient, amount,
currency, paymentType, userId and bank, plus its occurrence among identical rows. Editing,
reordering or removing other rows, or saving the file with CRLF line endings, must leave every
other row's id alone: a new id for the same payout is how a row gets paid twice.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from schema_rows import SERVICES, banks_by_phone, row

from payflow.intake import ValidationReport, batch_from_rows, read_batch_file
from payflow.intake.identity import derived_external_ids
from payflow.tasks.validate_batch import validate_rows

HEADER = ["amount", "currency", "paymentType", "requisites", "name", "userId"]
ROWS = [
    ["1500", "XOF", "SIM", "2250700001234", "Awa Kone", "u-1"],
    ["2500", "XOF", "SIM", "2250700005678", "Yao Kouadio", "u-2"],
    ["1500", "XOF", "SIM", "2250700001234", "Awa Kone", "u-1"],  # pays u-1 twice on purpose
    ["900", "XOF", "SIM", "2250700009012", "Kofi Mensah", "u-3"],
]


def _validate_rows(rows: list[list[str]], header: list[str] = HEADER) -> ValidationReport:
    raw = batch_from_rows([header, *rows])
    return validate_rows(raw, services=SERVICES, banks_for_phones=banks_by_phone)


def _ids_by_user(report: ValidationReport) -> list[tuple[str, str]]:
    return sorted((i.user_id, i.external_id) for i in report.instructions)


def _write_csv(path: Path, rows: list[list[str]], newline: str) -> Path:
    path.write_bytes(newline.join(",".join(r) for r in [HEADER, *rows]).encode() + b"\n")
    return path


def test_identical_rows_are_numbered_by_occurrence() -> None:
    ids = [i.external_id for i in _validate_rows(ROWS).instructions]
    assert ids[0].startswith("pf-") and ids[0].endswith("-1")
    assert ids[2] == ids[0][: -len("1")] + "2"
    assert len(set(ids)) == 4


def test_editing_another_row_keeps_every_other_id() -> None:
    before = _validate_rows(ROWS)
    edited = [list(r) for r in ROWS]
    edited[1][0] = "2600"  # only row 3's amount changes
    after = _validate_rows(edited)
    kept = [i.external_id for i in before.instructions if i.user_id != "u-2"]
    assert kept == [i.external_id for i in after.instructions if i.user_id != "u-2"]
    changed = {i.external_id for i in after.instructions if i.user_id == "u-2"}
    assert changed.isdisjoint({i.external_id for i in before.instructions})


def test_reordering_rows_keeps_the_set_of_ids() -> None:
    before = _validate_rows(ROWS)
    after = _validate_rows(list(reversed(ROWS)))
    assert _ids_by_user(before) == _ids_by_user(after)


def test_removing_a_bad_row_keeps_the_others_ids() -> None:
    bad = ["-5", "XOF", "SIM", "2250700003456", "Bad Row", "u-9"]
    with_bad = _validate_rows([ROWS[0], bad, *ROWS[1:]])
    assert {p.row for p in with_bad.rejects} == {3}
    without = _validate_rows(ROWS)
    assert _ids_by_user(with_bad) == _ids_by_user(without)


def test_blank_cells_in_an_external_id_column_get_the_same_ids_as_no_column() -> None:
    given = [["", *ROWS[0]], ["mine-1", *ROWS[1]], ["", *ROWS[2]], ["", *ROWS[3]]]
    with_column = _validate_rows(given, ["externalId", *HEADER])
    no_column = _validate_rows(ROWS)
    derived = {i.external_id for i in no_column.instructions if i.user_id != "u-2"}
    assert {i.external_id for i in with_column.instructions} == derived | {"mine-1"}


def test_amount_spelling_does_not_change_the_id_but_the_amount_does() -> None:
    (plain,) = _validate_rows([ROWS[0]]).instructions
    (decimals,) = _validate_rows([["1500.00", *ROWS[0][1:]]]).instructions
    (other,) = _validate_rows([["1505", *ROWS[0][1:]]]).instructions
    assert plain.external_id == decimals.external_id != other.external_id


@pytest.mark.parametrize("newline", ["\r\n", "\r"])
def test_a_file_saved_again_with_other_line_endings_keeps_its_ids(
    tmp_path: Path, newline: str
) -> None:
    unix = read_batch_file(_write_csv(tmp_path / "unix.csv", ROWS, "\n"))
    other = read_batch_file(_write_csv(tmp_path / "other.csv", ROWS, newline))
    assert unix.batch_id != other.batch_id  # the bytes differ, so the batch does
    first = validate_rows(unix, services=SERVICES, banks_for_phones=banks_by_phone)
    again = validate_rows(other, services=SERVICES, banks_for_phones=banks_by_phone)
    assert [i.external_id for i in first.instructions] == [
        i.external_id for i in again.instructions
    ]


def test_each_identity_column_changes_the_id() -> None:
    base = row("SBP", externalId="")
    raw = batch_from_rows([list(base), list(base.values())])
    (reference,) = derived_external_ids(raw.frame).tolist()
    changes = {
        "requisites": "79161234568",
        "amount": "1501",
        "currency": "USD",
        "paymentType": "SIM",
        "userId": "user-2",
        "bankName": "100000000004",
    }
    for column, value in changes.items():
        changed = {**base, column: value}
        raw = batch_from_rows([list(changed), list(changed.values())])
        assert derived_external_ids(raw.frame).tolist() != [reference], column
