"""The error for a header that lacks required columns: what was found, where the data may be."""

from __future__ import annotations

from collections.abc import Callable, Sequence

from payflow.intake.columns import header_key, match_headers
from payflow.intake.problems import BatchFileError, SheetToChoose

SCANNED_ROWS = 10  # rows below the header (or atop another sheet) searched for the real header
SHOWN_HEADERS = 12
FIRST_DATA_ROW = 2
# What a links file (externalId, userId, amount[, serviceId]) lacks of a payout batch.
LINKS_ONLY_MISSING = {"currency", "paymentType", "requisites", "name"}

MissingColumns = Callable[[list[str]], Sequence[str]]
"""The required columns a header row lacks (none: the header is complete)."""


def payout_columns_missing(header: list[str]) -> Sequence[str]:
    """The payout batch columns a header row lacks."""
    return match_headers(header).missing_required


def missing_columns_error(
    name: str,
    header: Sequence[str],
    top: Sequence[Sequence[str]],
    missing: Sequence[str],
    elsewhere: Callable[[], dict[str, list[list[str]]]] | None = None,
) -> BatchFileError:
    """`required column missing: ...; headers found: ...`, plus where the header seems to be:
    one of the `top` rows below it (a title row above the header) or another sheet."""
    found = [str(h).strip() for h in header if str(h).strip()]
    shown = ", ".join(found[:SHOWN_HEADERS]) or "none"
    if len(found) > SHOWN_HEADERS:
        shown += f" and {len(found) - SHOWN_HEADERS} more"
    message = (
        f"{name}: required column missing: {', '.join(missing)}; headers found in row 1: {shown}"
        f"{_other_kind(name, found, missing)}"
    )
    below = header_row(top)
    if below is not None:
        row = below + FIRST_DATA_ROW
        return BatchFileError(
            f"{message}; row {row} looks like the header: delete the title rows above it"
        )
    for sheet, rows in (elsewhere() if elsewhere else {}).items():
        at = header_row(rows)
        if at is not None:
            return SheetToChoose(
                f"{message}; sheet {sheet!r} seems to hold the data (header on row {at + 1})",
                [sheet],
                f"add --sheet {sheet!r}",
            )
    return BatchFileError(message)


def _other_kind(name: str, found: Sequence[str], missing: Sequence[str]) -> str:
    """Where a refund or links file goes, when it was given as a payout batch: the missing
    columns alone sent the operator to add payout columns to it."""
    keys = {header_key(header) for header in found}
    if "orderid" in keys:
        return (
            f"; an orderId column is a refund file's: refunds are made by `payflow refund {name}`"
        )
    if set(missing) == LINKS_ONLY_MISSING and "externalid" in keys:
        return (
            "; externalId, userId and amount alone are a payout links file's: recipients' links "
            f"are issued by `payflow links {name}`"
        )
    return ""


def header_row(rows: Sequence[Sequence[str]]) -> int | None:
    """Index of the first row that names every required column, if any."""
    for index, row in enumerate(rows[:SCANNED_ROWS]):
        if not match_headers([str(c) for c in row]).missing_required:
            return index
    return None
