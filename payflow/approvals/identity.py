"""Who is acting: the OS user, unless the settings name one (tests build Settings(user=...))."""

from __future__ import annotations

import getpass

from payflow.settings import Settings


def current_user(settings: Settings) -> str:
    """The person payflow records as a batch's maker (intake) or as an approver (approve)."""
    return settings.user or getpass.getuser()
