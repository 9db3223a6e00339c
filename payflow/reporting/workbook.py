"""The reconciliation workbook: readme, summary (with a chart), rows, rejects and findings.

Written in openpyxl's write-only mode, so rows stream to disk and a batch of any size costs
flat memory. Column widths and frozen panes are set before the first row (write-only requires
it); the filter range is set once the row count is known.
"""

from __future__ import annotations

from collections.abc import Iterable, Sequence
from datetime import UTC, datetime
from decimal import Decimal
from pathlib import Path
from typing import Any

from openpyxl import Workbook
from openpyxl.cell import WriteOnlyCell
from openpyxl.cell.cell import Cell as SheetCell
from openpyxl.chart import BarChart, Reference
from openpyxl.styles import Alignment, PatternFill
from openpyxl.utils import get_column_letter

from payflow.atomic import abandon_workbook, save_workbook
from payflow.inert import text_cell
from payflow.ledger import UNSENT_WORDS, RowOutcome
from payflow.reconcile import DRIFT_CAVEAT, RollForward
from payflow.reporting.cell_styles import CellStyles
from payflow.reporting.headings import bold, header_row, heading
from payflow.reporting.layout import LAYOUT_VERSION, ROW_COLUMNS, Cell, Kind
from payflow.reporting.money import money_cell, number_format, shown_width
from payflow.reporting.printing import (
    line_height,
    lines_needed,
    print_one_page_wide,
    print_pages_wide,
    tall_alignment,
)
from payflow.reporting.summary import NO_CURRENCY, Summary
from payflow.reporting.xml_rows import XmlRowsSheet

NO_REAL_MONEY_NOTE = "Embedded sandbox: no real money moved."
TIME_FORMAT = "yyyy-mm-dd hh:mm:ss"
RATE_FORMAT = "0.00%"
INDENT = Alignment(indent=1)
INDENTED_WRAP = Alignment(wrap_text=True, vertical="top", indent=1)
CHART_LINES = 20  # lines of the sheet one 9 cm chart covers, with a gap below it
# openpyxl types its write-only sheets and cells loosely; they are handled as Any here.
Sheet = Any
OUTCOME_COLOURS: dict[RowOutcome, str] = {
    RowOutcome.PAID: "C6EFCE",
    RowOutcome.PAID_CORRECTED: "A9D08E",
    RowOutcome.FAILED: "FFC7CE",
    RowOutcome.CORRECTED: "F4B084",
    RowOutcome.CANCELED: "FFE699",
    RowOutcome.EXPIRED: "FFE699",
    RowOutcome.PENDING: "BDD7EE",
    RowOutcome.PENDING_AT_SERVICE: "9BC2E6",
    RowOutcome.NOT_SENT: "D9D9D9",
    RowOutcome.REFUSED: "E4DFEC",
    RowOutcome.REJECTED: "E4DFEC",
    RowOutcome.DUPLICATE: "EDEDED",
}
FILLS = {o: PatternFill("solid", start_color=c, end_color=c) for o, c in OUTCOME_COLOURS.items()}
CHART_OUTCOMES = (
    RowOutcome.PAID,
    RowOutcome.PAID_CORRECTED,
    RowOutcome.FAILED,
    RowOutcome.CORRECTED,
    RowOutcome.CANCELED,
    RowOutcome.EXPIRED,
    RowOutcome.PENDING,
    RowOutcome.PENDING_AT_SERVICE,
)
OUTCOME_INDEX = ROW_COLUMNS.index(next(c for c in ROW_COLUMNS if c.name == "outcome"))
CURRENCY_INDEX = ROW_COLUMNS.index(next(c for c in ROW_COLUMNS if c.name == "currency"))
REJECT_HEADER = ("source_row", "external_id", "reasons")
REJECT_WIDTHS = (10.0, 24.0, 80.0)
FINDING_HEADER = (
    "finding_id",
    "source_row",
    "external_id",
    "kind",
    "state",
    "detail",
    "opened_at_utc",
    "updated_at_utc",
    "acknowledged_by",
    "acknowledged_at_utc",
    "acknowledgement_note",
)
FINDING_WIDTHS = (12.0, 12.0, 24.0, 26.0, 13.0, 60.0, 20.0, 20.0, 16.0, 20.0, 40.0)
README_WIDTHS = (38.0, 12.0, 90.0)
ROWS_PAGES_WIDE = 3


def _filter(sheet: Sheet, columns: int, rows: int) -> None:
    sheet.auto_filter.ref = f"A1:{get_column_letter(columns)}{max(rows, 1) + 1}"


def _styled(sheet: Sheet, value: Any, number: str | None = None) -> Any:
    cell = WriteOnlyCell(sheet, value=value)
    if number is not None:
        cell.number_format = number
    return cell


class WorkbookWriter:
    """Open the sheets in order, take rows as they stream, then finish with the findings."""

    def __init__(self, batch_id: str, *, sandbox: bool) -> None:
        self.workbook = Workbook(write_only=True)
        self.batch_id = batch_id
        self.sandbox = sandbox
        self._styles = CellStyles()
        self._readme = self.workbook.create_sheet("readme")
        self._summary = self.workbook.create_sheet("summary")
        # One line per row of the batch: written as XML (`xml_rows`), not as openpyxl cells.
        self.rows = XmlRowsSheet(self.workbook, "rows", self._styles)
        self.rejects = XmlRowsSheet(self.workbook, "rejects", self._styles)
        self.findings = self.workbook.create_sheet("findings")
        self._row_count = 0
        self._reject_count = 0
        self._formats: dict[str, str] = {}
        # Per (amount format, outcome, tall line): each column's style id, found at its first
        # value (as openpyxl numbered them when it wrote the cells); -1 until then.
        self._row_styles: dict[tuple[str, RowOutcome, bool], list[int]] = {}
        header_row(
            self.rows,
            [c.name for c in ROW_COLUMNS],
            [c.width for c in ROW_COLUMNS],
            [c.name for c in ROW_COLUMNS if c.kind in (Kind.NUMBER, Kind.AMOUNT)],
        )
        # Its columns are over three times a landscape page's width: on one page they printed
        # at about 31%, too small to read. Three pages across print at about 75%, each page
        # starting with the source row and externalId its figures belong to.
        print_pages_wide(self.rows, ROWS_PAGES_WIDE, key_columns="A:B")
        # Headings over figures sit right, over them: "source_rowexternal_id" read as one.
        header_row(self.rejects, REJECT_HEADER, REJECT_WIDTHS, ("source_row",))
        header_row(self.findings, FINDING_HEADER, FINDING_WIDTHS, ("finding_id", "source_row"))

    def add_row(self, cells: Sequence[Cell], reasons: Iterable[str] | None) -> None:
        """One source row (`row_cells`) on the rows sheet; rejected rows also on rejects."""
        currency = cells[CURRENCY_INDEX]
        amount_format = self._formats.get(str(currency))
        if amount_format is None:
            amount_format = self._formats[str(currency)] = number_format(str(currency))
        lines = max(
            (
                lines_needed(str(value), column.width)
                for column, value in zip(ROW_COLUMNS, cells, strict=True)
                if column.wrap and value is not None
            ),
            default=1,
        )
        outcome = RowOutcome(str(cells[OUTCOME_INDEX]))
        styles = self._row_styles.get((amount_format, outcome, lines > 1))
        if styles is None:
            styles = self._row_styles[amount_format, outcome, lines > 1] = [-1] * len(cells)
        for index, value in enumerate(cells):
            if value is not None and styles[index] < 0:
                styles[index] = self._column_style(index, amount_format, outcome, lines > 1)
        self._row_count += 1
        self.rows.append_line(cells, styles, lines)
        if reasons is not None:
            self._reject_count += 1
            external_id = "" if cells[1] is None else str(cells[1])
            why = "; ".join(str(r) for r in reasons)
            lines = max(
                lines_needed(external_id, REJECT_WIDTHS[1]),
                lines_needed(why, REJECT_WIDTHS[2]),
            )
            self.rejects.append_tall([cells[0], external_id, why], lines)

    def _column_style(self, index: int, amount_format: str, outcome: RowOutcome, tall: bool) -> int:
        """The style id of column `index` of a row: amounts and times in their number format,
        the outcome in its colour, every cell of a tall line at the top, its text wrapped."""
        kind = ROW_COLUMNS[index].kind
        return self.rows.style(
            number_format=(
                amount_format if kind is Kind.AMOUNT else TIME_FORMAT if kind is Kind.TIME else None
            ),
            fill=FILLS[outcome] if index == OUTCOME_INDEX else None,
            alignment=tall_alignment(kind is Kind.TEXT) if tall else None,
        )

    def finish(self, summary: Summary, path: Path) -> None:
        """Write readme, summary and findings, set the filters, save."""
        _filter(self.rows, len(ROW_COLUMNS), self._row_count)
        _filter(self.rejects, len(REJECT_HEADER), self._reject_count)
        for number, finding in enumerate(summary.findings, start=2):
            line = [
                finding.id,
                finding.row_number,
                text_cell(self.findings, finding.external_id),
                finding.kind,
                finding.state,
                text_cell(self.findings, finding.detail),
                _styled(self.findings, finding.opened_at.replace(tzinfo=None), TIME_FORMAT),
                _styled(self.findings, finding.updated_at.replace(tzinfo=None), TIME_FORMAT),
                text_cell(self.findings, finding.acknowledged_by),
                None
                if finding.acknowledged_at is None
                else _styled(
                    self.findings, finding.acknowledged_at.replace(tzinfo=None), TIME_FORMAT
                ),
                text_cell(self.findings, finding.acknowledged_note),
            ]
            lines = max(
                lines_needed(finding.external_id or "", FINDING_WIDTHS[2]),
                lines_needed(finding.detail, FINDING_WIDTHS[5]),
                lines_needed(finding.acknowledged_note or "", FINDING_WIDTHS[10]),
            )
            append_tall(self.findings, number, line, lines)
        _filter(self.findings, len(FINDING_HEADER), len(summary.findings))
        self._write_readme()
        _SummarySheet(self._summary, summary).write()
        save_workbook(self.workbook, path)

    def abandon(self) -> None:
        """Close the sheets' open row streams when the report is given up before `finish`
        (its CSV hit a full disk): left to the garbage collector they printed lxml tracebacks."""
        abandon_workbook(self.workbook)

    def _write_readme(self) -> None:
        sheet = self._readme
        for index, width in enumerate(README_WIDTHS, start=1):
            sheet.column_dimensions[get_column_letter(index)].width = width
        print_one_page_wide(sheet, header_rows=0)
        generated = datetime.now(UTC).isoformat(timespec="seconds")
        head: list[list[Any]] = [
            [bold(sheet, "payflow reconciliation report")],
            ["batch_id", text_cell(sheet, self.batch_id)],
            ["layout_version", LAYOUT_VERSION],
            ["generated_at_utc", generated],
            *([["note", NO_REAL_MONEY_NOTE]] if self.sandbox else []),
            ["amounts", "Numbers with the currency's decimals (XOF 0, RUB 2, KWD 3)."],
            ["times", "UTC, without a zone."],
            [],
            [bold(sheet, "column"), bold(sheet, "kind"), bold(sheet, "meaning")],
        ]
        for line in head:
            sheet.append(line)
        for number, column in enumerate(ROW_COLUMNS, start=len(head) + 1):
            lines = lines_needed(column.meaning, README_WIDTHS[2])
            line = [column.name, column.kind.value, column.meaning]
            append_tall(sheet, number, line, lines)
        sheet.append([])
        sheet.append([bold(sheet, "outcome"), bold(sheet, "colour")])
        for outcome in RowOutcome:
            cell = WriteOnlyCell(sheet, value=outcome.value)
            cell.fill = FILLS[outcome]
            sheet.append([cell, OUTCOME_COLOURS[outcome]])


def _wrapped_line(
    sheet: Sheet, values: Sequence[Any], lines: int, styles: CellStyles | None = None
) -> list[Any]:
    """The line as it is, or, when its text takes `lines` > 1, every cell at the top and the
    text cells wrapped: a long statusMessage or next step was cut at the next column. `styles`:
    the workbook's cache, for cells not styled yet (each alignment set is otherwise hashed)."""
    if lines == 1:
        return list(values)
    cells: list[Any] = []
    for value in values:
        if value is None:
            cells.append(None)
            continue
        cell = value if isinstance(value, SheetCell) else WriteOnlyCell(sheet, value=value)
        alignment = tall_alignment(cell.data_type == "s")
        if styles is not None and not cell.has_style:
            styles.dress(cell, alignment=alignment)
        else:
            cell.alignment = alignment
        cells.append(cell)
    return cells


def append_tall(
    sheet: Sheet,
    number: int,
    values: Sequence[Any],
    lines: int,
    styles: CellStyles | None = None,
) -> None:
    """Append line `number` to a write-only sheet, `lines` lines tall (`_wrapped_line`; lines
    from `lines_needed`); its height is dropped once written, so a sheet of a million lines
    holds no height per line."""
    _append_sized(sheet, number, _wrapped_line(sheet, values, lines, styles), lines)


def _append_sized(sheet: Sheet, number: int, cells: Sequence[Any], lines: int) -> None:
    """Append cells already styled for `lines` as line `number`, `lines` lines tall."""
    if lines > 1:
        sheet.row_dimensions[number].height = line_height(lines)
    sheet.append(cells)
    if lines > 1:
        del sheet.row_dimensions[number]


def _wrapped(sheet: Sheet, text: str) -> Any:
    # A next step or a reason is a sentence: wrapped in its column, never cut at the page edge.
    cell = text_cell(sheet, text)
    cell.alignment = INDENTED_WRAP
    return cell


def _at_top(sheet: Sheet, line: Sequence[Any]) -> list[Any]:
    """The line's cells aligned to the top, as its wrapped sentence is: at the bottom of a tall
    line a figure sat beside the sentence's last words, not its first."""
    cells = []
    for value in line:
        cell = value if isinstance(value, SheetCell) else WriteOnlyCell(sheet, value=value)
        old = cell.alignment
        cell.alignment = Alignment(
            horizontal=old.horizontal, indent=old.indent, wrap_text=old.wrap_text, vertical="top"
        )
        cells.append(cell)
    return cells


def _indented(sheet: Sheet, text: str) -> Any:
    # Text beside a right-aligned number otherwise touches it ("30retryable").
    cell = WriteOnlyCell(sheet, value=text)
    cell.alignment = INDENT
    return cell


CURRENCY_HEADER = (
    "currency",
    "rows_in_file",
    "rejected_in_file",
    "refused",
    "duplicate",
    "not_sent",
    "sent",
    "paid_rows",
    "paid_amount",
    "service_completed_payouts",
    "service_completed_amount",
    "failed_rows",
    "failed_amount",
    "canceled_rows",
    "expired_rows",
    "corrected_rows",
    "pending_rows",
    "stuck_rows",
    "blocked_before_sending",
    "failed_after_sending",
    "stalled",
)
BALANCE_HEADER = (
    "currency",
    "start_available",
    "start_held",
    "batch_moved_available",
    "batch_moved_held",
    "expected_available",
    "expected_held",
    "actual_available",
    "actual_held",
    "drift_available",
    "drift_held",
    "other_batches_available",
    "unexplained_drift_available",
)
UNSENT_HEADER = ("currency", "rows", "why")
FAILURE_HEADER = ("currency", "status", "status_message", "rows", "amount", "class", "next_step")
NUMBER_HEADINGS = frozenset({"rows", "amount"})


SUMMARY_WIDTHS = (38.0, 16.0, 34.0, 16.0, 16.0, 16.0, 70.0)
"""Figure names, then one column per currency; the failures block's status messages in the
third column and next steps in the seventh (wrapped)."""


FIGURE_WIDTH = 16.0
"""The least width of a currency column the summary's fixed widths do not reach."""


def _summary_widths(summary: Summary) -> dict[int, float]:
    """Each column's width: SUMMARY_WIDTHS, widened where a currency's amounts need more. A
    seventh currency's column kept the spreadsheet's default width, and its balance of a
    billion printed as ###."""
    columns: dict[int, list[tuple[Decimal | None, str]]] = {}
    charted = [c for c in summary.currencies if c.currency != NO_CURRENCY]
    for blocks in (summary.currencies, charted):
        for index, c in enumerate(blocks, start=2):
            amounts = [c.amount(outcome) for outcome in CHART_OUTCOMES]
            columns.setdefault(index, []).extend((a, c.currency) for a in amounts)
    for index, r in enumerate(summary.balance, start=2):
        columns.setdefault(index, []).extend((v, r.currency) for v in _balance_values(r))
    widths = dict(enumerate(SUMMARY_WIDTHS, start=1))
    for index, figures in columns.items():
        widest = max(
            (
                shown_width(amount, None if currency == NO_CURRENCY else currency) + 2
                for amount, currency in figures
                if amount is not None
            ),
            default=0,
        )
        widths[index] = max(widths.get(index, FIGURE_WIDTH), widest)
    return widths


def _balance_values(r: RollForward) -> tuple[Decimal | None, ...]:
    """A currency's roll-forward figures in BALANCE_HEADER's order (after its currency)."""
    return (
        r.start_available,
        r.start_held,
        r.moved_available,
        r.moved_held,
        r.expected_available,
        r.expected_held,
        r.end_available,
        r.end_held,
        r.drift_available,
        r.drift_held,
        r.other_available,
        r.unexplained_available,
    )


def _transposed(header: Sequence[str], columns: list[list[Any]]) -> list[list[Any]]:
    """One line per figure (`header[1:]`), one column per currency: 19 columns across printed
    too small to read; a dozen lines down one narrow page do not."""
    return [[name, *(column[i] for column in columns)] for i, name in enumerate(header[1:])]


class _SummarySheet:
    """The summary sheet, block by block; it tracks the row number for the chart's references."""

    def __init__(self, sheet: Sheet, summary: Summary) -> None:
        self.sheet = sheet
        self.summary = summary
        self.line = 0
        for index, width in _summary_widths(summary).items():
            sheet.column_dimensions[get_column_letter(index)].width = width
        sheet.freeze_panes = "A2"
        # Figures down, currencies across: one page wide is readable.
        print_one_page_wide(sheet, header_rows=0)

    def append(self, cells: Sequence[Any]) -> None:
        self.sheet.append(list(cells))
        self.line += 1

    def _tall_enough(self, *texts: tuple[str, float]) -> None:
        """Make the next line tall enough for each (text, width) wrapped in a column that wide:
        a write-only sheet keeps the default height, and a wrapped line ran over the next one."""
        lines = max(lines_needed(text, width) for text, width in texts)
        if lines > 1:
            self.sheet.row_dimensions[self.line + 1].height = line_height(lines)

    def money(self, amount: Decimal | None, currency: str) -> Any | None:
        if amount is None:
            return None
        return money_cell(self.sheet, amount, None if currency == NO_CURRENCY else currency)

    def write(self) -> None:
        summary, sheet = self.summary, self.sheet
        self.append([bold(sheet, f"Batch {summary.batch_id}")])
        if summary.sandbox:
            self.append([NO_REAL_MONEY_NOTE])
        if rechecked := summary.not_rechecked_line():
            self.append([rechecked])
        self.append([])
        self.append(
            [
                bold(sheet, CURRENCY_HEADER[0]),
                *(heading(sheet, c.currency) for c in summary.currencies),
            ]
        )
        columns: list[list[Any]] = []
        for c in summary.currencies:
            rate = RATE_FORMAT
            columns.append(
                [
                    c.in_file,
                    c.count(RowOutcome.REJECTED),
                    c.count(RowOutcome.REFUSED),
                    c.count(RowOutcome.DUPLICATE),
                    c.count(RowOutcome.NOT_SENT),
                    c.sent,
                    c.paid,
                    self.money(c.paid_amount, c.currency),
                    c.service_payouts,
                    self.money(c.service_amount, c.currency),
                    c.count(RowOutcome.FAILED),
                    self.money(c.amount(RowOutcome.FAILED), c.currency),
                    c.count(RowOutcome.CANCELED),
                    c.count(RowOutcome.EXPIRED),
                    c.count(RowOutcome.CORRECTED),
                    c.pending,
                    c.stuck,
                    _styled(sheet, c.blocked_rate, rate),
                    _styled(sheet, c.failed_rate, rate),
                    _styled(sheet, c.stalled_rate, rate),
                ]
            )
        for line in _transposed(CURRENCY_HEADER, columns):
            self.append(line)
        self.append([])
        if summary.unsent:
            self._unsent()
            self.append([])
        self._balance()
        self.append([])
        self._failures()
        self.append([])
        self._chart()

    def _balance(self) -> None:
        self.append([bold(self.sheet, "Balance roll-forward")])
        self.append([DRIFT_CAVEAT])
        if not self.summary.balance:
            self.append(["No balance was read when the batch started paying."])
            return
        self.append(
            [bold(self.sheet, BALANCE_HEADER[0])]
            + [heading(self.sheet, r.currency) for r in self.summary.balance]
        )
        columns: list[list[Any]] = []
        for r in self.summary.balance:
            columns.append([self.money(v, r.currency) for v in _balance_values(r)])
        for line in _transposed(BALANCE_HEADER, columns):
            self.append(line)
        for r in self.summary.balance:
            if r.other_batches:
                named = ", ".join(f"{b} ({a:+} {r.currency})" for b, a in r.other_batches)
                self.append([f"{r.currency}: other batches of this ledger meanwhile: {named}"])

    def _unsent(self) -> None:
        self.append([bold(self.sheet, "Rows never sent, by reason")])
        self.append(self._block_header(UNSENT_HEADER))
        for t in self.summary.unsent:
            why = UNSENT_WORDS[t.reason]
            self._tall_enough((why, SUMMARY_WIDTHS[2]))
            line = [text_cell(self.sheet, t.currency), t.rows, _wrapped(self.sheet, why)]
            self.append(_at_top(self.sheet, line))

    def _failures(self) -> None:
        self.append([bold(self.sheet, "Failed rows by statusMessage")])
        self.append(self._block_header(FAILURE_HEADER))
        for group in self.summary.failures:
            t = group.total
            message = t.status_message or "(no message)"
            next_step = group.classification.next_step
            self._tall_enough((message, SUMMARY_WIDTHS[2]), (next_step, SUMMARY_WIDTHS[6]))
            line = [
                text_cell(self.sheet, t.currency),
                text_cell(self.sheet, t.state),
                # Wrapped: the rows figure beside it cut a long message short.
                _wrapped(self.sheet, message),
                t.rows,
                self.money(t.amount, t.currency),
                _indented(self.sheet, group.classification.failure_class.value),
                _wrapped(self.sheet, next_step),
            ]
            self.append(_at_top(self.sheet, line))

    def _block_header(self, names: Sequence[str]) -> list[Any]:
        """Bold names, right-aligned over figures; a name after a figure indented, as its
        values are ("amountclass")."""
        cells = []
        for before, name in zip(("", *names), names, strict=False):
            if name in NUMBER_HEADINGS:
                cells.append(heading(self.sheet, name))
                continue
            cell = bold(self.sheet, name)
            if before in NUMBER_HEADINGS:
                cell.alignment = INDENT
            cells.append(cell)
        return cells

    def _chart(self) -> None:
        currencies = [c for c in self.summary.currencies if c.currency != NO_CURRENCY]
        self.append([bold(self.sheet, "Amounts by outcome")])
        first = self.line + 1
        self.append(["outcome", *(heading(self.sheet, c.currency) for c in currencies)])
        for outcome in CHART_OUTCOMES:
            self.append(
                [
                    outcome.value,
                    *(self.money(c.amount(outcome), c.currency) for c in currencies),
                ]
            )
        last = self.line
        # One chart per currency, one under the other: on one axis 25,000 XOF towered over
        # 4,250.50 RUB, though it is the smaller sum of money.
        for index, c in enumerate(currencies):
            chart = BarChart()
            chart.type = "col"
            chart.title = f"{c.currency} by outcome"
            chart.y_axis.title = c.currency
            chart.x_axis.title = "outcome"
            column = 2 + index
            data = Reference(self.sheet, min_col=column, min_row=first, max_row=last)
            labels = Reference(self.sheet, min_col=1, min_row=first + 1, max_row=last)
            chart.add_data(data, titles_from_data=True)
            chart.set_categories(labels)
            chart.legend = None  # the title names the one currency
            chart.width, chart.height = 18, 9
            self.sheet.add_chart(chart, f"A{last + 2 + index * CHART_LINES}")
