"""Who may read what payflow writes: its owner only, or one group the operator names.

The ledger holds every recipient's requisites and the operators' password hashes; reports and
claims files hold requisites and claim URLs. Every file payflow creates is 0600 and every folder
0700, or, with PAYFLOW_SHARED_GROUP, 0660 and 02770 with that group (the setgid bit passes the
group on to what is created inside, SQLite's -wal and -shm included: SQLite gives them the
database file's mode). Every place that creates a file or folder goes through this module.
"""

from __future__ import annotations

import contextlib
import grp
import os
import pwd
from dataclasses import dataclass
from pathlib import Path

OWNER_FILE, OWNER_FOLDER = 0o600, 0o700
GROUP_FILE, GROUP_FOLDER = 0o660, 0o2770
SETTING = "PAYFLOW_SHARED_GROUP"


class FileAccessRefused(PermissionError):
    """This OS user cannot use a file payflow needs; the message says which and what to do."""


@dataclass(frozen=True)
class FileAccess:
    """Owner-only (`group_id` None) or shared with the group `group_id`."""

    group_id: int | None = None

    @property
    def file_mode(self) -> int:
        """The mode of a new file."""
        return OWNER_FILE if self.group_id is None else GROUP_FILE

    @property
    def folder_mode(self) -> int:
        """The mode of a new folder."""
        return OWNER_FOLDER if self.group_id is None else GROUP_FOLDER

    @property
    def umask(self) -> int:
        """The process umask that gives the files others create for us (Prefect's) no more."""
        return 0o077 if self.group_id is None else 0o007


def shared_group_id(name: str) -> int:
    """The id of the group `name`, which this user must belong to; a ValueError saying what to
    do otherwise (the settings turn it into one line naming PAYFLOW_SHARED_GROUP)."""
    try:
        group = grp.getgrnam(name)
    except KeyError:
        raise ValueError(
            f"no group named {name!r} on this machine: create it (groupadd {name}) and add "
            "each person's OS user to it, or unset the setting"
        ) from None
    if os.geteuid() != 0 and group.gr_gid not in {os.getegid(), *os.getgroups()}:
        user = _user_name(os.geteuid())
        raise ValueError(
            f"OS user {user} is not in group {name!r}: add them (usermod -aG {name} {user}) "
            "and log in again"
        )
    return group.gr_gid


def file_access() -> FileAccess:
    """This process's access for new files, from PAYFLOW_SHARED_GROUP (read when asked)."""
    from payflow.settings import Settings

    group = Settings().shared_group
    return FileAccess(shared_group_id(group) if group else None)


def use_umask(access: FileAccess) -> None:
    """Give files this process creates outside this module (Prefect's) the same ceiling."""
    os.umask(access.umask)


def make_folder(path: Path, access: FileAccess | None = None) -> Path:
    """Create `path` and its missing parents with the folder mode (and group); folders that
    already exist are left as they are. Returns `path`."""
    access = access or file_access()
    missing: list[Path] = []
    folder = path
    while not folder.exists():
        missing.append(folder)
        if folder.parent == folder:
            break
        folder = folder.parent
    for folder in reversed(missing):
        try:
            folder.mkdir(mode=access.folder_mode)
        except FileExistsError:  # another process made it in between: theirs to set
            continue
        _own(folder, access, access.folder_mode)
    if not path.is_dir():
        raise NotADirectoryError(f"{path} is not a folder")
    return path


def create_file(path: Path, access: FileAccess | None = None) -> int:
    """A new file at `path` (FileExistsError if there is one) with the file mode and group,
    whatever the umask; its descriptor, open for writing."""
    access = access or file_access()
    descriptor = os.open(
        path, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_CLOEXEC, access.file_mode
    )
    try:
        if access.group_id is not None:
            os.fchown(descriptor, -1, access.group_id)
        os.fchmod(descriptor, access.file_mode)
    except BaseException:
        os.close(descriptor)
        raise
    return descriptor


def ensure_file(path: Path, access: FileAccess | None = None) -> Path:
    """Create `path` empty with the file mode when it does not exist (an existing file is left
    as it is), so that what opens it next (SQLite, a log handler) starts from that mode."""
    with contextlib.suppress(FileExistsError):
        os.close(create_file(path, access))
    return path


def write_new_text(path: Path, text: str, access: FileAccess | None = None) -> Path:
    """Write `text` (UTF-8) into a new file at `path`."""
    with os.fdopen(create_file(path, access), "w", encoding="utf-8") as handle:
        handle.write(text)
    return path


def describe_owner(path: Path) -> str:
    """`owner alice, group payflow, mode 0600`, for a message about a file someone cannot use."""
    stat = path.stat()
    try:
        group = grp.getgrgid(stat.st_gid).gr_name
    except KeyError:
        group = str(stat.st_gid)
    return f"owner {_user_name(stat.st_uid)}, group {group}, mode {stat.st_mode & 0o7777:04o}"


def _own(path: Path, access: FileAccess, mode: int) -> None:
    if access.group_id is not None:
        os.chown(path, -1, access.group_id)
    os.chmod(path, mode)  # after chown, which may clear the setgid bit


def _user_name(uid: int) -> str:
    try:
        return pwd.getpwuid(uid).pw_name
    except KeyError:
        return str(uid)
