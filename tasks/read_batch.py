"""Reading a batch file as a Prefect task (the work is in `payflow.intake`)."""

from __future__ import annotations

from pathlib import Path

from prefect import task
from prefect.cache_policies import NO_CACHE

from payflow.intake import RawBatch, read_batch_file


@task(name="read-batch", cache_policy=NO_CACHE)
def read_batch(path: str | Path, sheet: str | None = None) -> RawBatch:
    """Read a CSV or XLSX batch into text cells; raises BatchFileError when it cannot be read."""
    return read_batch_file(path, sheet)
