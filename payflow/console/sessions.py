"""Server-side sessions (the cookie holds only a random id) and CSRF tokens.

Sessions end after `IDLE_SECONDS` without a request (a signed-in checker's forgotten browser
stops being able to approve payouts), and at most `MAX_SESSIONS` are kept: every anonymous
`GET /login` makes one, and they were kept until the console restarted, so anyone could grow
its memory without end.
"""

from __future__ import annotations

import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field

from payflow.console.intake import UploadResult
from payflow.console.kept_uploads import KeptUpload
from payflow.console.operators import Operator

COOKIE = "payflow_console"
IDLE_SECONDS = 3600.0  # signed in: one hour without a request signs the browser out
ANONYMOUS_IDLE_SECONDS = 900.0  # a sign-in form not used within 15 minutes is asked again
MAX_SESSIONS = 10_000
MAX_NOTICES = 20  # notices not shown yet (a redirect never followed) are dropped oldest first


@dataclass
class Session:
    """A browser's session: its CSRF token and, once signed in, the operator."""

    csrf: str = field(default_factory=lambda: secrets.token_urlsafe(32))
    operator: Operator | None = None
    last_seen: float = 0.0
    # What the console's last action on a batch said, shown once on that batch's page: a
    # notice read from the URL let any link make the console say anything.
    notices: dict[str, str] = field(default_factory=dict)
    # The last upload's problems and warnings, shown by GET after the POST's redirect: a
    # refresh or Back then reads the page again instead of posting the file again.
    upload: UploadResult | None = None
    # A workbook kept while this session chooses its sheet (its bytes are on disk, not here).
    kept: KeptUpload | None = None

    def idle_limit(self) -> float:
        """Seconds without a request after which the session is over."""
        return IDLE_SECONDS if self.operator is not None else ANONYMOUS_IDLE_SECONDS

    def tell(self, batch_id: str, text: str) -> None:
        """Keep `text` for the next showing of the batch's page."""
        self.notices.pop(batch_id, None)
        self.notices[batch_id] = text
        while len(self.notices) > MAX_NOTICES:
            del self.notices[next(iter(self.notices))]

    def notice_for(self, batch_id: str) -> str | None:
        """The batch's notice, once: a reload no longer shows it."""
        return self.notices.pop(batch_id, None)


class Sessions:
    """In memory: restarting the console signs everyone out."""

    def __init__(self, clock: Callable[[], float] = time.monotonic) -> None:
        self._by_id: dict[str, Session] = {}
        self._lock = threading.Lock()
        self._clock = clock

    def get(self, session_id: str | None) -> Session | None:
        """The session of a cookie value, if any and not idle too long; it is seen now."""
        now = self._clock()
        with self._lock:
            session = self._by_id.get(session_id or "")
            if session is None:
                return None
            if now - session.last_seen > session.idle_limit():
                del self._by_id[session_id or ""]
                return None
            session.last_seen = now
            return session

    def new(self, operator: Operator | None = None) -> tuple[str, Session]:
        """A fresh id and session (a new id at sign-in: no session fixation)."""
        session_id = secrets.token_urlsafe(32)
        now = self._clock()
        session = Session(operator=operator, last_seen=now)
        with self._lock:
            if len(self._by_id) >= MAX_SESSIONS:
                self._make_room(now)
            self._by_id[session_id] = session
        return session_id, session

    def drop(self, session_id: str | None) -> None:
        """Sign out."""
        with self._lock:
            self._by_id.pop(session_id or "", None)

    def __len__(self) -> int:
        with self._lock:
            return len(self._by_id)

    def _make_room(self, now: float) -> None:
        """Forget idle sessions; if still full, the oldest not signed in (then the oldest)."""
        for key, session in list(self._by_id.items()):
            if now - session.last_seen > session.idle_limit():
                del self._by_id[key]
        excess = len(self._by_id) - MAX_SESSIONS + 1
        if excess <= 0:
            return
        signed_in = [key for key, session in self._by_id.items() if session.operator is not None]
        anonymous = [key for key, session in self._by_id.items() if session.operator is None]
        for key in (anonymous + signed_in)[:excess]:
            del self._by_id[key]


def csrf_matches(session: Session | None, given: str | None) -> bool:
    """Constant-time comparison of the form's (or header's) token with the session's."""
    if session is None or not given:
        return False
    return secrets.compare_digest(session.csrf.encode(), given.encode())
