"""Files that appear whole or not at all: reports are written beside their target, then renamed.

Two runs of one batch may write its report at the same moment, and an operator may open it while
it is being written; a rename is atomic on one filesystem, so either sees a complete file. A
report of two files (CSV and XLSX) is renamed into place only once both are written, so a full
disk leaves the earlier pair (or nothing), never a new CSV beside no XLSX.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager, suppress
from datetime import UTC, datetime
from pathlib import Path
from typing import Any
from zipfile import ZIP_DEFLATED, ZipFile

from payflow.file_access import create_file


def _part(path: Path, mode: int | None = None) -> Path:
    """A new empty file beside `path`: owner-only or the shared group's (payflow.file_access), as
    a report holds requisites; or exactly `mode` when given."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    if mode is None:
        os.close(create_file(temporary))
        return temporary
    descriptor = os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, mode)
    try:
        os.fchmod(descriptor, mode)  # an owner-only file stays so whatever the umask
    finally:
        os.close(descriptor)
    return temporary


@contextmanager
def replaced(path: Path) -> Iterator[Path]:
    """Yield a new empty file beside `path`; on success it replaces `path`, else it is removed."""
    with replaced_together(path) as (temporary,):
        yield temporary


@contextmanager
def replaced_together(*paths: Path) -> Iterator[tuple[Path, ...]]:
    """As `replaced`, for files that belong together: none replaces its target unless every one
    was written; on any error each new file is removed."""
    temporaries: list[Path] = []
    try:
        for path in paths:
            temporaries.append(_part(path))
        yield tuple(temporaries)
        for temporary, path in zip(temporaries, paths, strict=True):
            temporary.replace(path)
    except BaseException:
        for temporary in temporaries:
            temporary.unlink(missing_ok=True)
        raise


@contextmanager
def created(path: Path, mode: int | None = None) -> Iterator[Path]:
    """As `replaced`, for a file that must be new: it appears whole at `path` with `mode` (by
    default payflow.file_access's, from its creation on), and FileExistsError when `path`
    exists; it never replaces a file."""
    temporary = _part(path, mode)
    try:
        yield temporary
        try:
            os.link(temporary, path)  # fails on an existing file, where a rename would replace it
        except FileExistsError:
            raise
        except OSError:
            # A filesystem without hard links: the name is new (checked), so a rename is safe.
            if path.exists():
                raise FileExistsError(path) from None
            temporary.replace(path)
    finally:
        temporary.unlink(missing_ok=True)


def save_workbook(workbook: Any, path: Path) -> None:
    """openpyxl's `Workbook.save`, with its ZIP archive closed whatever happens: a write that
    failed (a full disk) left the archive open, and its closing at exit printed a traceback."""
    from openpyxl.writer.excel import ExcelWriter

    if workbook.write_only and not workbook.worksheets:
        workbook.create_sheet()  # as Workbook.save does
    workbook.properties.modified = datetime.now(UTC).replace(tzinfo=None)
    try:
        with ZipFile(path, "w", ZIP_DEFLATED, allowZip64=True) as archive:
            ExcelWriter(workbook, archive).write_data()
    except BaseException:
        abandon_workbook(workbook)
        raise


def abandon_workbook(workbook: Any) -> None:
    """Close what a failed save left open: a write-only sheet's row and XML generators, closed
    later by the garbage collector, printed lxml tracebacks ("Exception ignored in ...")."""
    for sheet in getattr(workbook, "_sheets", []):
        discard = getattr(sheet, "discard_lines", None)  # `reporting.xml_rows`'s lines
        if discard is not None:
            discard()
        writer = getattr(sheet, "_writer", None)
        for generator in (getattr(sheet, "_rows", None), getattr(writer, "xf", None)):
            if generator is not None:
                with suppress(Exception):
                    generator.close()
        if writer is not None and isinstance(getattr(writer, "out", None), str):
            with suppress(Exception):
                writer.cleanup()  # its temporary file of rows
