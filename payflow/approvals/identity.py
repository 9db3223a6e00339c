"""Who is acting: the OS user, unless the settings name one (tests build Settings(user=...)).
For a file a deployed run takes, its maker is who dropped it: the file's owner. For anything else
a deployed run registers (a rerun), the person its `maker` parameter names; without one, the
worker's own account, which names nobody and is never presented as a person."""

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
    return _other_owner(path) or deployment_maker(settings, named)


def file_maker_note(path: Path, settings: Settings, named: str | None = None) -> str | None:
    """`worker_account_note` when `file_maker` names this worker's account (a file it owns, no
    `maker`): the daily run says so in its summary and log, as a rerun does; else None."""
    if _other_owner(path) is not None or not names_nobody(named):
        return None
    return worker_account_note(current_user(settings))


def _other_owner(path: Path) -> str | None:
    """The OS user owning `path` when that is not this worker's user; else None."""
    try:
        owner = path.stat().st_uid
    except OSError:  # gone or unreadable: intake says so in one line, and registers nothing
        return None
    if owner == os.geteuid():
        return None
    try:
        return pwd.getpwuid(owner).pw_name
    except KeyError:  # an owner with no account here (a mounted share): its number
        return f"uid:{owner}"


def deployment_maker(settings: Settings, named: str | None) -> str:
    """The maker of a batch a deployed run registers with no file owner to name it: `named`
    (the deployment's `maker` parameter: whoever asked for the run), else this worker's own
    account (see `names_nobody`)."""
    return (named or "").strip() or current_user(settings)


def names_nobody(named: str | None) -> bool:
    """True when a deployed run's `maker` parameter names nobody, so its batch's maker is the
    worker's account: the two-person rule then keeps only that account from approving, and
    whoever asked for the run could approve it themselves."""
    return not (named or "").strip()


def worker_account_note(account: str) -> str:
    """Says that `account` is the worker's, not a person, wherever a deployed run shows the
    maker it recorded without a `maker` parameter."""
    return (
        f"maker recorded as {account}, this worker's account and not a person: anyone else can "
        "approve; start the run with parameter maker=<who asked> to name its maker"
    )


def person_key(name: str) -> str:
    """The one form two names are compared in: "mia", "MIA", "Mia " and "mia" with an invisible
    character are one person, or a maker could approve her own batch under a look-alike name."""
    visible = "".join(c for c in unicodedata.normalize("NFKC", name) if c.isprintable())
    return " ".join(visible.split()).casefold()


def is_plain_name(name: str) -> bool:
    """A name with no invisible or control characters: what a record shows is who acted."""
    return unicodedata.normalize("NFKC", name).isprintable()
