"""Telling people: one setting (`PAYFLOW_NOTIFY`, apprise URLs), one function (`send`).

apprise (already a dependency of Prefect) delivers one message to mail, Slack, Teams, Telegram
or a plain JSON webhook, each named by one URL. A message names the batch, its counts and the
command or console page to open: never requisites, never a token. A message that cannot be
delivered is one warning line in the log; it never stops a payment or a run.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from dataclasses import dataclass
from enum import StrEnum

from payflow.settings import Settings

logger = logging.getLogger(__name__)


class Event(StrEnum):
    """What happened, as the message's title says it."""

    APPROVAL_NEEDED = "approval needed"
    APPROVAL_EXPIRING = "approval about to expire"
    APPROVAL_EXPIRED = "approval expired"
    UNPAID_ROWS = "finished with unpaid rows"
    FINDING_OPENED = "finding opened"
    RUN_RESUMED = "run crashed and resumed"
    CANNOT_RESUME = "run crashed, not resumed"
    INBOX_FILE_FAILED = "inbox file failed"


# Who reads each kind of message first; one list of receivers gets them all, so the message
# says whom it is for.
AUDIENCE: dict[Event, str] = {
    Event.APPROVAL_NEEDED: "checkers",
    Event.APPROVAL_EXPIRING: "checkers",
    Event.APPROVAL_EXPIRED: "the maker",
    Event.UNPAID_ROWS: "the maker",
    Event.FINDING_OPENED: "operators",
    Event.RUN_RESUMED: "operators",
    Event.CANNOT_RESUME: "operators",
    Event.INBOX_FILE_FAILED: "the maker",
}


@dataclass(frozen=True, slots=True)
class Notice:
    """One message: what happened to which batch (or file), the figures, the next step."""

    event: Event
    subject: str  # "batch <id>", or the inbox file's name
    lines: tuple[str, ...]
    next_step: str  # the command or console page to open

    @property
    def title(self) -> str:
        return f"payflow: {self.event.value}: {self.subject}"

    @property
    def body(self) -> str:
        return "\n".join([*self.lines, f"Next: {self.next_step}", f"(for {AUDIENCE[self.event]})"])


def batch_notice(event: Event, batch_id: str, lines: list[str], next_step: str) -> Notice:
    """A notice about a batch."""
    return Notice(event, f"batch {batch_id}", tuple(lines), next_step)


def send(settings: Settings, notice: Notice) -> bool:
    """Deliver `notice` to every URL of `PAYFLOW_NOTIFY`; True when all took it (or none is
    set). Never raises: a receiver down is one warning line, the caller goes on."""
    if not settings.notify:
        return True
    try:
        delivered = _deliver(settings.notify, notice)
    except Exception as exc:  # a notification must never stop a payment
        logger.warning(
            "notification %r (%s) not delivered: %s",
            notice.event.value,
            notice.subject,
            type(exc).__name__,
        )
        return False
    if not delivered:
        logger.warning(
            "notification %r (%s) not delivered to every receiver of PAYFLOW_NOTIFY",
            notice.event.value,
            notice.subject,
        )
    return delivered


def tell(settings: Settings, build: Callable[[], Notice]) -> bool:
    """Build the notice (it reads the ledger) and send it; never raises, so that telling
    people never stops what they are told about."""
    if not settings.notify:
        return True
    try:
        notice = build()
    except Exception as exc:
        logger.warning("notification not built: %s", type(exc).__name__)
        return False
    return send(settings, notice)


def _deliver(urls: list[str], notice: Notice) -> bool:
    import apprise

    # apprise logs each failed receiver itself, some with a traceback; ours is the one line.
    logging.getLogger("apprise").setLevel(logging.CRITICAL)
    box = apprise.Apprise()
    added = [box.add(url) for url in urls]
    if not any(added):
        return False
    sent = box.notify(title=notice.title, body=notice.body, body_format=apprise.NotifyFormat.TEXT)
    return bool(sent) and all(added)
