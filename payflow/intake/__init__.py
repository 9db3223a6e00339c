"""Intake: reading batch files into text cells and the report of what validation found."""

from payflow.intake.problems import (
    BankResolution,
    BatchFileError,
    Problem,
    ValidationReport,
)
from payflow.intake.reading import RawBatch, batch_from_rows, batch_id_of, read_batch_file

__all__ = [
    "BankResolution",
    "BatchFileError",
    "Problem",
    "RawBatch",
    "ValidationReport",
    "batch_from_rows",
    "batch_id_of",
    "read_batch_file",
]
