"""Who is acting: the OS user, unless the settings name one (tests build Settings(user=...))."""

from __future__ import annotations

import getpass
import unicodedata

from payflow.settings import Settings


def current_user(settings: Settings) -> str:
    """The person payflow records as a batch's maker (intake) or as an approver (approve)."""
    return settings.user or getpass.getuser()


def person_key(name: str) -> str:
    """The one form two names are compared in: "mia", "MIA", "Mia " and "mia" with an invisible
    character are one person, or a maker could approve her own batch under a look-alike name."""
    visible = "".join(c for c in unicodedata.normalize("NFKC", name) if c.isprintable())
    return " ".join(visible.split()).casefold()


def is_plain_name(name: str) -> bool:
    """A name with no invisible or control characters: what a record shows is who acted."""
    return unicodedata.normalize("NFKC", name).isprintable()
