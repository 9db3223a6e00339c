"""Who is acting: the OS user, unless the settings name one (tests build Settings(user=...))."""

from __future__ import annotations

import getpass
import unicodedata

from payflow.settings import Settings


def current_user(settings: Settings) -> str:
    """The person payflow records as a batch's maker (intake) or as an approver (approve)."""
    return settings.user or getpass.getuser()


def person_key(name: str) -> str:
    """The one form two names are compared in: "mia", "MIA" and "Mia " are one person, or a
    maker could approve her own batch by typing her name in capitals."""
    return unicodedata.normalize("NFKC", name).strip().casefold()
