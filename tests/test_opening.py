"""A file an operator names is opened as a regular file or refused in one line, and opening a
named pipe never waits for a writer (payflow.opening)."""

from __future__ import annotations

import os
import tempfile
from pathlib import Path

import pytest

from payflow.opening import (
    UnreadableFile,
    UnwritablePath,
    check_file,
    check_new_file,
    check_out_folder,
    read_file,
)


def test_a_regular_file_is_read_whole(tmp_path: Path) -> None:
    path = tmp_path / "b.csv"
    path.write_bytes(b"amount\n1\n")
    check_file(path)
    assert read_file(path) == b"amount\n1\n"


def test_what_is_no_file_is_named_for_what_it_is(tmp_path: Path) -> None:
    os.mkfifo(tmp_path / "pipe")
    (tmp_path / "dangling").symlink_to(tmp_path / "gone")
    (tmp_path / "empty.csv").write_bytes(b"")
    cases = {
        tmp_path: f"{tmp_path} is a folder, not a file: name a file in it",
        tmp_path / "pipe": f"{tmp_path / 'pipe'} is a named pipe (FIFO), not a file",
        Path("/dev/null"): "/dev/null is a device, not a file",
        tmp_path / "empty.csv": "empty.csv is empty",
        tmp_path / "gone": f"{tmp_path / 'gone'} does not exist",
        tmp_path / "dangling": f"{tmp_path / 'dangling'} does not exist",
        tmp_path / "gone" / "b.csv": f"{tmp_path / 'gone' / 'b.csv'} does not exist",
    }
    for path, words in cases.items():
        for opening in (check_file, read_file):
            with pytest.raises(UnreadableFile) as refused:
                opening(path)
            assert str(refused.value).startswith(words)


def _as_nobody(path: Path) -> str:
    """What check_file says of `path` in a forked child that has become the user nobody."""
    reading, writing = os.pipe()
    child = os.fork()
    if child == 0:  # pragma: no cover - the child reports through the pipe
        message = "opened"
        try:
            os.setgid(65534)
            os.setuid(65534)
            check_file(path)
        except UnreadableFile as exc:
            message = str(exc)
        finally:
            os.write(writing, message.encode())
            os._exit(0)
    os.close(writing)
    with os.fdopen(reading, "rb") as pipe:
        said = pipe.read().decode()
    os.waitpid(child, 0)
    return said


@pytest.mark.skipif(os.geteuid() != 0, reason="needs root to become another user")
def test_a_file_the_user_may_not_read_is_said_so() -> None:
    # Root reads any file, so the check runs in a child that is the user nobody; in a folder of
    # its own under /tmp, as pytest's are the owner's only.
    folder = Path(tempfile.mkdtemp(dir="/tmp"))
    path = folder / "b.csv"
    try:
        folder.chmod(0o755)
        path.write_bytes(b"amount\n1\n")
        path.chmod(0o600)
        assert _as_nobody(path) == f"cannot read {path}: permission denied"
        path.chmod(0o644)
        assert _as_nobody(path) == "opened"
    finally:
        path.unlink(missing_ok=True)
        folder.rmdir()


def test_an_out_folder_is_made_or_refused_in_one_line(tmp_path: Path) -> None:
    # A file named as the folder read "cannot write the report to taken: File exists".
    check_out_folder(tmp_path / "reports" / "march")
    assert (tmp_path / "reports" / "march").is_dir()
    (tmp_path / "taken").write_text("a file", encoding="utf-8")
    cases = {
        tmp_path / "taken": f"{tmp_path / 'taken'} is a file, not a folder: name a folder",
        tmp_path / "taken" / "sub": "a part of it is a file, not a folder",
        Path("/proc/payflow-reports"): "no folder can be made there",
    }
    for path, words in cases.items():
        with pytest.raises(UnwritablePath, match=words):
            check_out_folder(path)


def test_a_new_file_is_never_a_folder_nor_in_a_missing_one(tmp_path: Path) -> None:
    check_new_file(tmp_path / "t.xlsx", "t.xlsx")
    (tmp_path / "filled.xlsx").write_bytes(b"a filled-in template")
    cases = {
        # It said "already exists; give another --out" of a folder.
        tmp_path: f"{tmp_path} is a folder: name the file to write in it, such as "
        f"{tmp_path / 't.xlsx'}",
        tmp_path / "filled.xlsx": "filled.xlsx already exists; give another --out",
        # It said "No such file or directory".
        tmp_path / "gone" / "t.xlsx": f"the folder {tmp_path / 'gone'} does not exist",
    }
    for path, words in cases.items():
        with pytest.raises(UnwritablePath) as refused:
            check_new_file(path, "t.xlsx")
        assert words in str(refused.value)
