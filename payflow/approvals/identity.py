"""Who is acting: the OS user, unless the settings name one (tests build Settings(user=...)).
For a file a deployed run takes, its maker is who dropped it: the file's owner."""

from __future__ import annotations

import getpass
import os
import pwd
import unicodedata
from pathlib import Path

from payflow.settings import Settings


def current_user(settings: Settings) -> str:
    """The person payflow records as a batch's maker (intake) or as an approver (approve)."""
    return settings.user or getpass.getuser()


def file_maker(path: Path, settings: Settings, named: str | None = None) -> str:
    """The maker of a batch a deployed run takes from `path`: the file's owner when that is
    another OS user than this worker's (the person who dropped it), else `named` (the
    deployment's `maker`), else this worker's user. The worker's own account is nobody: with
    it as the maker, the person who dropped the file could approve it."""
    try:
        owner = path.stat().st_uid
    except OSError:  # gone or unreadable: intake says so in one line, and registers nothing
        owner = os.geteuid()
    if owner != os.geteuid():
        try:
            return pwd.getpwuid(owner).pw_name
        except KeyError:  # an owner with no account here (a mounted share): its number
            return f"uid:{owner}"
    return named or current_user(settings)


def person_key(name: str) -> str:
    """The one form two names are compared in: "mia", "MIA", "Mia " and "mia" with an invisible
    character are one person, or a maker could approve her own batch under a look-alike name."""
    visible = "".join(c for c in unicodedata.normalize("NFKC", name) if c.isprintable())
    return " ".join(visible.split()).casefold()


def is_plain_name(name: str) -> bool:
    """A name with no invisible or control characters: what a record shows is who acted."""
    return unicodedata.normalize("NFKC", name).isprintable()
