"""Reading a links file (externalId, userId, amount, serviceId) and checking it by the widget's
rules: every problem of every row at once, each naming the row, the column and the rule.

The rules are the widget payload's own (`payflow.api.widget.WidgetPayload`): each row is checked
as the payload it will become, so a row that passes here can always be signed later.
"""

from __future__ import annotations

import re
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field, replace
from decimal import Decimal
from pathlib import Path
from typing import Any

import pandas as pd
from pydantic import ValidationError

from payflow.api.widget import WidgetPayload
from payflow.intake import BatchFileError, Problem
from payflow.intake.amounts import read_russian_amounts
from payflow.intake.columns import ReadColumns
from payflow.intake.lookups import ServiceInfo
from payflow.intake.problems import not_read
from payflow.intake.reading import FIRST_DATA_ROW, read_table, without_blank_rows
from payflow.links.records import CURRENCY, LinkRow
from payflow.links.report import rejected_rows
from payflow.schemas.column_rules import SERVICE_ID_PATTERN, external_id_path_problems
from payflow.schemas.lookups import service_verdict

REQUIRED = ("externalId", "userId", "amount")
WIDGET_PAYMENT_TYPE = "BANK_ACCOUNT"  # the widget pays a ruble bank account, nothing else
OPTIONAL = ("serviceId",)
# No free text: a date in any column is a mistake.
LINK_COLUMNS = ReadColumns(REQUIRED + OPTIONAL, frozenset(), "gets no payout link", "issue it one")
SERVICE_ID = re.compile(SERVICE_ID_PATTERN)  # as a payout file's serviceId
PLAIN_AMOUNT = re.compile(r"[0-9]{1,13}(?:\.[0-9]{1,2})?|[0-9]{1,13}\.[0-9]{3,}")
_PLACEHOLDER_MERCHANT = "00000000-0000-4000-8000-000000000000"
# Rules after which the cell is still text the widget can judge (an id padded with a space).
_READABLE_RULES = frozenset({"external_id_spaces", "user_id_spaces"})
_PAYLOAD_FIELDS = {
    "user_id": "userId",
    "userId": "userId",
    "external_id": "externalId",
    "externalId": "externalId",
    "amount": "amount",
    "service_id": "serviceId",
    "serviceId": "serviceId",
}


@dataclass
class LinkRowsReport:
    """A links file checked: its valid rows and every problem found."""

    batch_id: str
    source_name: str
    rows: int
    valid: list[LinkRow] = field(default_factory=list)
    problems: list[Problem] = field(default_factory=list)
    notices: list[Problem] = field(default_factory=list)  # how cells were read (told)
    # Row -> (externalId, serviceId) of every row whose serviceId cell is a whole number, its
    # other cells' problems notwithstanding: the services list judges each of them.
    service_ids: dict[int, tuple[str, int]] = field(default_factory=dict)

    @property
    def rejected(self) -> int:
        """Rows with at least one problem."""
        return rejected_rows(self.problems)


def read_link_rows(path: str | Path, sheet: str | None = None) -> LinkRowsReport:
    """Read and check a links file; BatchFileError (one line) when it cannot be read."""
    table = read_table(path, sheet, columns=LINK_COLUMNS)
    batch_id, name, frame, read_problems = (
        table.batch_id,
        table.source_name,
        table.frame,
        table.read_problems,
    )
    renames = {h: column for h in frame.columns if (column := LINK_COLUMNS.column_of(h))}
    missing = [c for c in REQUIRED if c not in renames.values()]
    if missing:
        raise BatchFileError(f"{name}: required column missing: {', '.join(missing)}")
    if len(set(renames.values())) != len(renames):
        raise BatchFileError(f"{name}: a column is given more than once")
    frame = frame[list(renames)].rename(columns=renames)
    frame.index = pd.RangeIndex(FIRST_DATA_ROW, FIRST_DATA_ROW + len(frame))
    # Named by the link column each cell is read as, as a payout file's are.
    read_problems = [replace(p, column=renames.get(p.column, p.column)) for p in read_problems]
    frame = without_blank_rows(frame, read_problems)
    if frame.empty:
        raise BatchFileError(f"{name} has a header but no data rows")
    notices = list(table.notices)  # Windows-1251, as a payout file's
    if table.decimal_comma:
        # `1 250,50` in a `;` file, as a payout file's
        frame, amounts = read_russian_amounts(frame)
        notices += amounts
    report = check_link_rows(batch_id, name, frame, read_problems)
    report.notices = notices
    return report


def check_link_rows(
    batch_id: str, source_name: str, frame: pd.DataFrame, read_problems: list[Problem]
) -> LinkRowsReport:
    """Check every row of a links table (text cells, index = spreadsheet row)."""
    report = LinkRowsReport(batch_id, source_name, len(frame), problems=list(read_problems))
    rows_of: dict[str, list[int]] = {}
    for row_number, external_id in zip(
        frame.index.tolist(), frame["externalId"].tolist(), strict=True
    ):
        if external_id:
            rows_of.setdefault(external_id, []).append(int(row_number))
    expires_at = int(time.time()) + 1800
    found: list[Problem] = []
    # As in payout and refund files: a claim URL and GET .../external/{externalId} carry the id
    # in a path (`.` and `..` answered 500). Edge spaces: this file's own rule, below.
    unusable = external_id_path_problems(frame["externalId"], frozenset({"external_id_spaces"}))
    for row_number, cells in _records(frame):
        problems = _row_problems(row_number, cells, expires_at)
        external_id = cells["externalId"]
        problems += [
            Problem(row_number, "externalId", rule, message, external_id, external_id[:80])
            for rule, message in unusable.get(row_number, [])
        ]
        repeats = [r for r in rows_of.get(external_id, []) if r != row_number]
        if repeats:
            # Which of the rows was meant cannot be known: none of them gets a link.
            problems.append(
                Problem(
                    row_number,
                    "externalId",
                    "external_id_unique",
                    f"externalId also on row {repeats[0]}: one link per externalId, none issued",
                    external_id,
                )
            )
        service = cells.get("serviceId", "")
        if service and not any(p.column == "serviceId" for p in problems):
            report.service_ids[row_number] = (external_id, int(service))
        if problems:
            found.extend(problems)
            continue
        report.valid.append(
            LinkRow(
                row_number,
                external_id,
                cells["userId"],
                Decimal(cells["amount"]),
                int(service) if service else None,
            )
        )
    # A cell read as nothing has its read problem: not also "userId is required".
    report.problems.extend(not_read(found, read_problems))
    bad_rows = {p.row for p in report.problems}
    report.valid = [row for row in report.valid if row.row_number not in bad_rows]
    # A serviceId read as nothing has no service to look up.
    unread = {p.row for p in read_problems if p.column == "serviceId"}
    report.service_ids = {r: s for r, s in report.service_ids.items() if r not in unread}
    return report


def _records(frame: pd.DataFrame) -> Iterator[tuple[int, dict[str, str]]]:
    columns = list(frame.columns)
    for row_number, values in zip(frame.index.tolist(), frame.itertuples(index=False), strict=True):
        yield int(row_number), dict(zip(columns, (str(v) for v in values), strict=True))


def _row_problems(row: int, cells: dict[str, str], expires_at: int) -> list[Problem]:
    external_id = cells["externalId"]
    problems: list[Problem] = []

    def add(column: str, rule: str, message: str) -> None:
        problems.append(
            Problem(row, column, rule, message, external_id, cells.get(column, "")[:80])
        )

    for column in REQUIRED:
        if not cells[column].strip():
            add(column, f"{column}_required", f"{column} is required")
    for column, rule in (("externalId", "external_id_spaces"), ("userId", "user_id_spaces")):
        # Rejected, never trimmed, as in a payout file: the widget would send the space as part
        # of the id, and the payout would be another externalId (or user) than the one written.
        if cells[column].strip() and cells[column] != cells[column].strip():
            add(column, rule, f"{column} starts or ends with a space: remove the space")
    amount, service = cells["amount"], cells.get("serviceId", "")
    if amount and not PLAIN_AMOUNT.fullmatch(amount):
        if amount.lstrip().startswith("-"):
            add("amount", "amount_positive", "amount must be positive (a link pays the recipient)")
        else:
            add("amount", "amount_plain_decimal", "amount must be written like 1500 or 1500.50")
    if service and not SERVICE_ID.fullmatch(service):
        add("serviceId", "service_id_integer", "serviceId must be a whole number")
    # A cell the widget cannot read at all (blank, no number) gets a harmless stand-in, so the
    # widget's rules still check every other cell of the row; a cell that is only padded with a
    # space is still its text, so its length and control characters are judged too: all
    # problems at once.
    unreadable = {p.column for p in problems if p.rule not in _READABLE_RULES}
    payload: dict[str, Any] = {
        "merchantId": _PLACEHOLDER_MERCHANT,
        "userId": cells["userId"] if "userId" not in unreadable else "-",
        "amount": amount if "amount" not in unreadable else "1",
        "currency": CURRENCY,
        "externalId": external_id if "externalId" not in unreadable else "-",
        "expiresAt": expires_at,
    }
    if service and "serviceId" not in unreadable:
        payload["serviceId"] = int(service)
    try:
        WidgetPayload.model_validate(payload)
    except ValidationError as exc:
        for error in exc.errors():
            column = _PAYLOAD_FIELDS.get(str(error["loc"][0]) if error["loc"] else "", "row")
            message = str(error["msg"]).removeprefix("Value error, ")
            add(column, f"widget_{column}", message)
    return problems


def check_link_services(report: LinkRowsReport, services: Sequence[ServiceInfo]) -> None:
    """Reject (in place) each row whose serviceId is not a BANK_ACCOUNT RUB service of the
    services list: the widget refuses such a link, so its claim could never be used. Every row
    with a whole-number serviceId is judged, a row rejected for its other cells too, so its
    operator learns every problem of the row in one run."""
    by_id = {service.id: service for service in services}
    refused: set[int] = set()
    for row_number, (external_id, service_id) in report.service_ids.items():
        verdict = service_verdict(by_id, str(service_id), WIDGET_PAYMENT_TYPE, CURRENCY)
        if verdict is None:
            continue
        rule, message = verdict
        refused.add(row_number)
        report.problems.append(
            Problem(
                row_number,
                "serviceId",
                rule,
                f"{message}: the widget would refuse the link",
                external_id,
                str(service_id),
            )
        )
    report.problems.sort(key=lambda p: p.row)  # stable: each row's problems keep their order
    report.valid = [row for row in report.valid if row.row_number not in refused]
