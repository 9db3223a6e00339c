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


@contextmanager
def replaced(path: Path) -> Iterator[Path]:
    """Yield a new empty file beside `path`; on success it replaces `path`, else it is removed."""
    temporary = path.with_name(f".{path.name}.{secrets.token_hex(6)}.part")
    # 0o666 less the umask, as any new file gets (mkstemp's 0o600 would hide a shared report).
    os.close(os.open(temporary, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o666))
    try:
        yield temporary
        temporary.replace(path)
    except BaseException:
        temporary.unlink(missing_ok=True)
        raise
