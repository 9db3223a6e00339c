"""Files that appear whole or not at all: reports are written beside their target, then renamed.

Two runs of one batch may write its report at the same moment, and an operator may open it while
it is being written; a rename is atomic on one filesystem, so either sees a complete file.
"""

from __future__ import annotations

import os
import secrets
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from payflow.file_access import create_file


@contextmanager
def replaced(path: Path) -> Iterator[Path]:
    """Yield a new empty file beside `path`; on success it replaces `path`, else it is removed."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    # Owner-only, or the shared group's (payflow.file_access): a report holds requisites.
    os.close(create_file(temporary))
    try:
        yield temporary
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
