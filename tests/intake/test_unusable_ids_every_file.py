"""An externalId no URL path segment can carry is refused the same way in every kind of file
(issue 36, item 3): payouts, refunds and payout links. A links file took `.` and `..` (their
claim URLs answered 500), a refund file took anything."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest

from payflow.intake import batch_from_rows
from payflow.intake.lookups import ServiceInfo
from payflow.links.rows import read_link_rows
from payflow.refunds.intake import refund_file_from_rows
from payflow.schemas.refund_schema import refund_problems
from payflow.tasks.validate_batch import validate_rows

UNUSABLE = {
    ".": "external_id_dot_segment",
    "..": "external_id_dot_segment",
    "a/b": "external_id_characters",
    "50%": "external_id_characters",
    "x?y": "external_id_characters",
}
ORDER = "0b8f3c2e-5a1d-4e6b-9f7a-1000000000{:02d}"


def _rules(problems: list, row_of: dict[int, str]) -> dict[str, set[str]]:  # type: ignore[type-arg]
    found: dict[str, set[str]] = {ext: set() for ext in row_of.values()}
    for problem in problems:
        if problem.row in row_of and problem.column == "externalId":
            found[row_of[problem.row]].add(problem.rule)
    return found


def _expected() -> dict[str, set[str]]:
    return {ext: {rule} for ext, rule in UNUSABLE.items()} | {"fine-1": set()}


def test_a_payout_file() -> None:
    header = ["externalId", "amount", "currency", "paymentType", "requisites", "name", "userId"]
    ids = [*UNUSABLE, "fine-1"]
    rows = [
        [ext, "1500", "XOF", "SIM", f"22507000{n:05d}", "Awa", f"u-{n}"]
        for n, ext in enumerate(ids)
    ]
    report = validate_rows(
        batch_from_rows([header, *rows]),
        services=[ServiceInfo(1, "SIM", "XOF")],
        banks_for_phones=None,
    )
    assert _rules(report.rejects, dict(enumerate(ids, start=2))) == _expected()


def test_a_refund_file() -> None:
    ids = [*UNUSABLE, "fine-1"]
    rows = [[ORDER.format(n), ext] for n, ext in enumerate(ids)]
    file = refund_file_from_rows([["orderId", "externalId"], *rows])
    assert _rules(refund_problems(file.frame), dict(enumerate(ids, start=2))) == _expected()


@pytest.mark.parametrize("ext", sorted(UNUSABLE))
def test_a_links_file(tmp_path: Path, ext: str) -> None:
    path = tmp_path / "links.csv"
    with path.open("w", encoding="utf-8", newline="") as handle:
        csv.writer(handle).writerows(
            [["externalId", "userId", "amount"], [ext, "u-1", "100"], ["fine-1", "u-2", "100"]]
        )
    report = read_link_rows(path)
    assert [row.external_id for row in report.valid] == ["fine-1"]
    assert _rules(report.problems, {2: ext, 3: "fine-1"}) == {ext: {UNUSABLE[ext]}, "fine-1": set()}
