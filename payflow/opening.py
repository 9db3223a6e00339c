"""Whether a path an operator names can be used: a file to read (a batch, refunds, links,
corrections), where anything but a regular file with something in it is refused in one line and
nothing waits on a named pipe; and where `--out` writes (a folder for reports, a new file for a
template), refused in one line before anything starts.

It imports nothing heavy, so a command checks its file before a Prefect server, the sandbox or
pandas start; the reader opens the file the same way, as it can change in between. The file
arguments of the commands are declared `readable=False`: click's own check of them printed a
usage error of three lines for a file the user may not read.
"""

from __future__ import annotations

import errno
import os
import stat
import tempfile
from pathlib import Path

from payflow.expected import ExpectedFailure
from payflow.file_access import make_folder
from payflow.redact import printable

_KINDS = {
    stat.S_IFDIR: "a folder, not a file: name a file in it",
    stat.S_IFIFO: "a named pipe (FIFO), not a file: save what it carries to a file and name that",
    stat.S_IFSOCK: "a socket, not a file",
    stat.S_IFCHR: "a device, not a file",
    stat.S_IFBLK: "a device, not a file",
}


class UnreadableFile(ExpectedFailure):
    """The path names no regular file this process can read; the message is one line."""


class UnwritablePath(ExpectedFailure):
    """The path names no folder (or new file) this process can write; the message is one line."""


def read_file(path: Path) -> bytes:
    """The whole content of the regular, non-empty file at `path`; UnreadableFile otherwise."""
    descriptor = _open(path)
    with os.fdopen(descriptor, "rb") as handle:
        return handle.read()


def check_file(path: Path) -> None:
    """UnreadableFile unless `path` is a non-empty regular file this process can open for
    reading."""
    os.close(_open(path))


def _open(path: Path) -> int:
    # Non-blocking: opening a FIFO for reading otherwise waits for a writer, for ever. What was
    # opened is then judged by its descriptor, so a path swapped in between is judged too.
    try:
        descriptor = os.open(path, os.O_RDONLY | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        raise UnreadableFile(_why(path, exc)) from None
    status = os.fstat(descriptor)
    kind = stat.S_IFMT(status.st_mode)
    if kind != stat.S_IFREG or status.st_size == 0:
        os.close(descriptor)
        if kind == stat.S_IFREG:  # said before a command starts anything (the reader says it too)
            raise UnreadableFile(empty_file(path.name))
        raise UnreadableFile(f"{path} is {_KINDS.get(kind, 'not a regular file')}")
    os.set_blocking(descriptor, True)
    return descriptor


def empty_file(name: str) -> str:
    """The one line for the file `name` with nothing in it (or nothing but blank lines)."""
    return f"{name} is empty"


def _why(path: Path, exc: OSError) -> str:
    if exc.errno in (errno.ENOENT, errno.ENOTDIR):
        return f"{path} does not exist"
    if exc.errno in (errno.EACCES, errno.EPERM):
        return f"cannot read {path}: permission denied"
    return f"cannot read {path}: {exc.strerror or exc}"


def check_out_folder(path: Path) -> None:
    """UnwritablePath unless a report can be written in the folder `path` (made with its
    parents when missing)."""
    shown = printable(str(path))
    if shown != str(path):
        # A line break in the name split the `report:` line in two; no one means one.
        raise UnwritablePath(
            f"the folder {shown} has a line break or another control character in its name: "
            "name another folder"
        )
    try:
        if path.exists() and not path.is_dir():
            raise UnwritablePath(f"{path} is a file, not a folder: name a folder for the report")
        make_folder(path)
        with tempfile.TemporaryFile(dir=path):
            pass
    except OSError as exc:
        # A 300-character folder name read "unexpected error (OSError)" (ENAMETOOLONG).
        raise UnwritablePath(f"cannot write the report to {shown}: {_cannot(exc)}") from None


def check_new_file(path: Path, default_name: str) -> None:
    """UnwritablePath unless a new file can be written at `path`: never over a file or a
    folder (`default_name` is the file to suggest in it), in a folder that exists."""
    if path.is_dir():
        raise UnwritablePath(
            f"{path} is a folder: name the file to write in it, such as {path / default_name}"
        )
    if path.exists() or path.is_symlink():  # perhaps a template already filled in
        raise UnwritablePath(f"{path} already exists; give another --out or move it away")
    folder = path.parent
    if not folder.is_dir():
        raise UnwritablePath(f"cannot write {path}: the folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise UnwritablePath(f"cannot write {path}: permission denied")


def why_not_written(exc: OSError) -> str:
    """Why a write failed, in a few words ("no space left on device", "permission denied")."""
    return _cannot(exc)


def _cannot(exc: OSError) -> str:
    if exc.errno in (errno.EACCES, errno.EPERM):
        return "permission denied"
    if exc.errno == errno.ENOTDIR:
        return "a part of it is a file, not a folder"
    if exc.errno == errno.ENOENT:  # a file system that makes no folders (/proc)
        return "no folder can be made there"
    if exc.errno == errno.EROFS:
        return "read-only file system"
    if exc.errno == errno.ENAMETOOLONG:
        return "a name in the path is longer than the file system allows"
    return (exc.strerror or str(exc)).lower()
