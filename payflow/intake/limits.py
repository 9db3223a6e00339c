"""Bounds on what reading a batch file may take on, checked while reading, before work grows."""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING

from payflow.intake.problems import BatchFileError

if TYPE_CHECKING:
    from payflow.settings import Settings


@dataclass(frozen=True)
class ReadLimits:
    """Rows, header columns, characters per cell, and empty rows in a row (see Settings)."""

    max_rows: int
    max_columns: int
    max_cell_chars: int
    max_blank_rows: int

    @classmethod
    def configured(cls) -> ReadLimits:
        """The limits of this process's settings (reading a file needs nothing else of them)."""
        from payflow.settings import Settings

        return cls.from_settings(Settings())

    @classmethod
    def from_settings(cls, settings: Settings) -> ReadLimits:
        """The limits configured by PAYFLOW_MAX_ROWS, _MAX_COLUMNS, _MAX_CELL_CHARS, ..."""
        return cls(
            settings.max_rows,
            settings.max_columns,
            settings.max_cell_chars,
            settings.max_blank_rows,
        )

    def check_rows(self, name: str, rows: int) -> None:
        """Refuse a file with more data rows than the limit."""
        if rows > self.max_rows:
            raise BatchFileError(
                f"{name} has more than {self.max_rows:,} data rows (PAYFLOW_MAX_ROWS); "
                "split it into smaller batches"
            )

    def check_columns(self, name: str, columns: int) -> None:
        """Refuse a header wider than the limit."""
        if columns > self.max_columns:
            raise BatchFileError(
                f"{name} has a header of {columns:,} columns, more than {self.max_columns} "
                "(PAYFLOW_MAX_COLUMNS); a payout batch needs at most 16"
            )

    def check_cell(self, name: str, row: int, column: str, length: int) -> None:
        """Refuse a cell longer than the limit (a name of 20 MB is not a name)."""
        if length > self.max_cell_chars:
            raise BatchFileError(
                f"{name}: row {row}, column {column!r} holds {length:,} characters, more than "
                f"{self.max_cell_chars:,} (PAYFLOW_MAX_CELL_CHARS)"
            )

    def check_blank_run(self, name: str, after_row: int, run: int) -> None:
        """Refuse a sheet whose empty rows run on past the limit: reading them costs minutes."""
        if run > self.max_blank_rows:
            raise BatchFileError(
                f"{name} has more than {self.max_blank_rows:,} empty rows in a row after row "
                f"{after_row} (PAYFLOW_MAX_BLANK_ROWS); delete them, and make sure no data "
                "follows them"
            )
