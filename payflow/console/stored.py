"""Serve a written file (a report, a rejects file) from where it lives: this machine's disk, or
the storage every machine reaches (payflow.storage), streamed in blocks."""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

from starlette.responses import FileResponse, Response, StreamingResponse

from payflow.storage import Place, is_remote, open_place, place_exists, place_name

BLOCK = 1 << 20
MEDIA_TYPES = {
    ".csv": "text/csv; charset=utf-8",
    ".xlsx": "application/vnd.openxmlformats-officedocument.spreadsheetml.sheet",
}


def stored_response(place: Place, filename: str | None = None) -> Response:
    """The file at `place` as a download named `filename` (its own name by default)."""
    name = filename or place_name(place)
    if not is_remote(str(place)):
        return FileResponse(Path(place), filename=name)
    suffix = Path(name).suffix.lower()
    handle = open_place(place)  # opened here: a missing object is an error before any byte

    def blocks() -> Iterator[bytes]:
        with handle:
            while block := handle.read(BLOCK):
                yield block

    return StreamingResponse(
        blocks(),
        media_type=MEDIA_TYPES.get(suffix, "application/octet-stream"),
        headers={"Content-Disposition": f'attachment; filename="{name}"'},
    )


def stored_exists(place: Place) -> bool:
    """True when the file at `place` is there (a remote object: one HEAD request)."""
    return place_exists(place)
