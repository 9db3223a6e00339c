"""Names a deployed run records when no operator signed in: the file's owner (another OS user
than this worker's) or the `maker` parameter, else this worker's own account. None of them is
an authenticated person: they are kept as the batch's claimed maker only, and the batch is held
to the two-person rule once an operator is its maker (`payflow.acts.register`): the operator
whose OS account owns the file, or a maker who submits it (`payflow submit`). PAYFLOW_USER is
not read here: it names nobody outside the command line's embedded sandbox."""

from __future__ import annotations

import getpass
import os
import pwd
import unicodedata
from pathlib import Path

from payflow.settings import Settings


def current_user(settings: Settings) -> str:
    """This process's OS account: what a deployed run records when nobody signed in."""
    del settings  # PAYFLOW_USER names nobody here (see `payflow.cli.signin`)
    return getpass.getuser()


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


def dropped_by(path: Path) -> str | None:
    """The OS account that dropped `path` (its owner, when not this worker's), or None: the
    operator whose OS account it is becomes the batch's maker."""
    return _other_owner(path)


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
        f"maker recorded as {account}, this worker's account and not a person: a signed-in "
        "maker submits the batch (payflow submit BATCH) before a checker may approve it"
    )


def person_key(name: str) -> str:
    """The one form two names are compared in: "mia", "MIA", "Mia " and "mia" with an invisible
    character are one person, or a maker could approve her own batch under a look-alike name."""
    visible = "".join(c for c in unicodedata.normalize("NFKC", name) if c.isprintable())
    return " ".join(visible.split()).casefold()


def is_plain_name(name: str) -> bool:
    """A name with no invisible or control characters: what a record shows is who acted."""
    return unicodedata.normalize("NFKC", name).isprintable()
