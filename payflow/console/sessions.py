"""Server-side sessions (the cookie holds only a random id) and CSRF tokens."""

from __future__ import annotations

import secrets
import threading
from dataclasses import dataclass, field

from payflow.console.operators import Operator

COOKIE = "payflow_console"


@dataclass
class Session:
    """A browser's session: its CSRF token and, once signed in, the operator."""

    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    operator: Operator | None = None


class Sessions:
    """In memory: restarting the console signs everyone out."""

    def __init__(self) -> None:
        self._by_id: dict[str, Session] = {}
        self._lock = threading.Lock()

    def get(self, session_id: str | None) -> Session | None:
        """The session of a cookie value, if any."""
        with self._lock:
            return self._by_id.get(session_id or "")

    def new(self, operator: Operator | None = None) -> tuple[str, Session]:
        """A fresh id and session (a new id at sign-in: no session fixation)."""
        session_id = secrets.token_urlsafe(32)
        session = Session(operator=operator)
        with self._lock:
            self._by_id[session_id] = session
        return session_id, session

    def drop(self, session_id: str | None) -> None:
        """Sign out."""
        with self._lock:
            self._by_id.pop(session_id or "", None)


def csrf_matches(session: Session | None, given: str | None) -> bool:
    """Constant-time comparison of the form's (or header's) token with the session's."""
    if session is None or not given:
        return False
    return secrets.compare_digest(session.csrf.encode(), given.encode())
