"""Properties: a valid row survives CSV and XLSX unchanged; accepted requisites equal their cell."""

from __future__ import annotations

import csv
import tempfile
from collections.abc import Mapping, Sequence
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from openpyxl import Workbook

from payflow.intake import read_batch_file
from payflow.intake.lookups import BankInfo
from payflow.schemas.requisites import account_with_key
from payflow.schemas.validation import validate_rows

HEADER = ["externalId", "amount", "currency", "paymentType", "requisites", "bankName", "name",
          "userId", "bik"]  # fmt: skip
BANK = BankInfo("100000000111", "Сбербанк")
BIK = "044525225"
PROPERTY_SETTINGS = settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.too_slow]
)

digits = st.text(alphabet="0123456789", min_size=1, max_size=1)
# Text a person types into a name cell: no control characters, not only spaces, no formula.
names = st.text(
    alphabet=st.characters(blacklist_categories=("Cc", "Cs", "Zl", "Zp")), min_size=1, max_size=30
).filter(lambda s: s.strip() and not s.startswith("=") and "\x85" not in s)
whole = st.integers(min_value=1, max_value=10**9)


def _digits(count: int) -> st.SearchStrategy[str]:
    return st.text(alphabet="0123456789", min_size=count, max_size=count)


sim_xof = st.tuples(
    st.integers(1, 10**8).map(lambda n: str(n * 5)),
    st.just("XOF"), st.just("SIM"),
    st.tuples(st.sampled_from(["225", "221", "229"]), _digits(10)).map("".join),
    st.just(""), st.just(""),
)  # fmt: skip
sim_kes = st.tuples(
    whole.map(str), st.just("KES"), st.just("SIM"),
    _digits(9).map(lambda d: "254" + d), st.just(""), st.just(""),
)  # fmt: skip
cents = st.tuples(whole, st.integers(0, 99)).map(lambda p: f"{p[0]}.{p[1]:02d}")
sbp = st.tuples(
    cents, st.just("RUB"), st.just("SBP"),
    _digits(9).map(lambda d: "79" + d), st.just(BANK.id), st.just(""),
)  # fmt: skip
account = st.tuples(
    cents, st.just("RUB"), st.just("BANK_ACCOUNT"),
    _digits(12).map(lambda d: account_with_key(BIK, "40817810" + d)), st.just(""), st.just(BIK),
)  # fmt: skip
valid_rows = st.lists(
    st.tuples(st.one_of(sim_xof, sim_kes, sbp, account), names), min_size=1, max_size=8
)


def _banks(phones: Sequence[str]) -> Mapping[str, Sequence[BankInfo]]:
    return {phone: [BANK] for phone in phones}


def _table(rows: list[tuple[tuple[str, ...], str]]) -> list[list[str]]:
    body = []
    for n, ((amount, currency, kind, requisites, bank, bik), name) in enumerate(rows):
        body.append([f"id-{n}", amount, currency, kind, requisites, bank, name, f"u{n}", bik])
    return [HEADER, *body]


def _write(folder: Path, table: list[list[str]], form: str, numbers: bool) -> Path:
    if form == "xlsx":
        workbook = Workbook()
        sheet = workbook.active
        assert sheet is not None
        for n, row in enumerate(table):
            cells: list[object] = list(row)
            if numbers and n and row[4].isdigit() and len(row[4]) <= 15:
                cells[4] = int(row[4])  # a phone Excel stored as a number
            sheet.append(cells)
        path = folder / "batch.xlsx"
        workbook.save(path)
        return path
    path = folder / "batch.csv"
    encoding, sep = {"csv": ("utf-8", ","), "csv-bom-semicolon": ("utf-8-sig", ";")}[form]
    with path.open("w", encoding=encoding, newline="") as handle:
        csv.writer(handle, delimiter=sep).writerows(table)
    return path


@PROPERTY_SETTINGS
@given(
    rows=valid_rows,
    form=st.sampled_from(["csv", "csv-bom-semicolon", "xlsx"]),
    numbers=st.booleans(),
)
def test_a_valid_row_stays_valid_through_a_file(
    rows: list[tuple[tuple[str, ...], str]], form: str, numbers: bool
) -> None:
    table = _table(rows)
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), table, form, numbers)
        report = validate_rows(read_batch_file(path), services=None, banks_for_phones=_banks)
    assert report.rejects == []
    read_back = [
        [i.external_id, str(i.amount), i.currency, i.payment_type, i.requisites,
         i.bank_name or "", i.name, i.user_id]
        for i in report.instructions
    ]  # fmt: skip
    assert read_back == [row[:8] for row in table[1:]]


requisites_like = st.text(alphabet="0123456789 +-()7a@.", min_size=0, max_size=22)


@PROPERTY_SETTINGS
@given(
    cells=st.lists(
        st.tuples(st.sampled_from([sim_xof, sim_kes, sbp, account]), requisites_like),
        min_size=1,
        max_size=8,
    ),
    data=st.data(),
)
def test_no_accepted_row_has_requisites_other_than_its_cell(
    cells: list[tuple[st.SearchStrategy[tuple[str, ...]], str]], data: st.DataObject
) -> None:
    rows = []
    for strategy, requisites in cells:
        base = data.draw(strategy)
        rows.append(((*base[:3], requisites, *base[4:]), "Recipient"))
    table = _table(rows)
    with tempfile.TemporaryDirectory() as folder:
        path = _write(Path(folder), table, "csv", numbers=False)
        report = validate_rows(read_batch_file(path), services=None, banks_for_phones=_banks)
    source = {n + 2: row[4] for n, row in enumerate(table[1:])}
    for instruction in report.instructions:
        assert instruction.requisites == source[instruction.row_number]
    rejected = {p.row for p in report.rejects}
    assert len(report.instructions) + len(rejected) == len(rows)
