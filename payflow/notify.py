"""Telling people: one setting (`PAYFLOW_NOTIFY`, apprise URLs), one function (`send`).

apprise (already a dependency of Prefect) delivers one message to mail, Slack, Teams, Telegram
or a plain JSON webhook, each named by one URL. A message names the batch, its counts and the
command or console page to open: never requisites, never a token. A message that cannot be
delivered is one warning line in the log; it never stops a payment or a run.

Each message is for one audience (`AUDIENCE_TAG`): checkers, makers or operations. A URL of the
setting carries the audiences it serves as apprise tags (`checkers=slack://...`,
`checkers+operations=json://...`); an untagged URL gets every message. A URL tagged `people` (a
mail server) also delivers to each person's own address, which an admin keeps in the ledger's
operators (`payflow console set-notify`): the batch's maker for unpaid rows, each checker but
the maker for a batch waiting for approval. No address of a person is ever a setting.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterable
from dataclasses import dataclass
from enum import StrEnum
from urllib.parse import parse_qsl, urlencode, urlsplit, urlunsplit

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


# The apprise tag of each audience: a URL tagged so in PAYFLOW_NOTIFY gets its messages.
CHECKERS, MAKERS, OPERATIONS = "checkers", "makers", "operations"
# A mail server's URL tagged so delivers to each person's own address (`Notice.people`).
PEOPLE = "people"
AUDIENCE_TAG: dict[Event, str] = {
    event: {"checkers": CHECKERS, "the maker": MAKERS, "operators": OPERATIONS}[whom]
    for event, whom in AUDIENCE.items()
}
TAGS = (CHECKERS, MAKERS, OPERATIONS, PEOPLE)
# apprise's own tag for a URL that gets every message, whatever the audience.
_EVERY_MESSAGE = "always"


@dataclass(frozen=True, slots=True)
class Receiver:
    """One URL of PAYFLOW_NOTIFY and the audiences it serves (none: every message)."""

    url: str
    tags: frozenset[str]


def receiver(entry: str) -> Receiver:
    """`checkers+operations=json://host/path` -> the URL and its tags; a plain URL has none.
    ValueError naming the tags allowed for an unknown one (never the URL: it may hold a
    password)."""
    head, sep, rest = entry.partition("=")
    if not sep or "://" in head:
        return Receiver(entry, frozenset())
    tags = frozenset(t.strip().lower() for t in head.split("+") if t.strip())
    unknown = sorted(tags - set(TAGS))
    if unknown or not tags:
        raise ValueError(
            f"unknown audience {'+'.join(unknown) or '(none)'} before '=': "
            f"use {', '.join(TAGS)}, joined with '+'"
        )
    return Receiver(rest, tags)


@dataclass(frozen=True, slots=True)
class Notice:
    """One message: what happened to which batch (or file), the figures, the next step, and the
    own addresses of the people it is for (read from the ledger's operators)."""

    event: Event
    subject: str  # "batch <id>", or the inbox file's name
    lines: tuple[str, ...]
    next_step: str  # the command or console page to open
    people: tuple[str, ...] = ()

    @property
    def title(self) -> str:
        return f"payflow: {self.event.value}: {self.subject}"

    @property
    def body(self) -> str:
        return "\n".join([*self.lines, f"Next: {self.next_step}", f"(for {AUDIENCE[self.event]})"])


def batch_notice(
    event: Event, batch_id: str, lines: list[str], next_step: str, people: Iterable[str] = ()
) -> Notice:
    """A notice about a batch (for the people at `people`, besides the audience's URLs)."""
    return Notice(event, f"batch {batch_id}", tuple(lines), next_step, tuple(people))


def send(settings: Settings, notice: Notice) -> bool:
    """Deliver `notice` to the URLs of `PAYFLOW_NOTIFY` for its audience, and to its people's
    own addresses; True when all took it (or none is for it). Never raises: a receiver down is
    one warning line, the caller goes on."""
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


def _deliver(entries: list[str], notice: Notice) -> bool:
    import apprise

    # apprise logs each failed receiver itself, some with a traceback; ours is the one line.
    logging.getLogger("apprise").setLevel(logging.CRITICAL)
    box = apprise.Apprise()
    added = []
    # One tag per person (apprise reads ':' in a tag as a priority, so not the address itself).
    people = {address: f"person-{n}" for n, address in enumerate(notice.people)}
    for one in map(receiver, entries):
        added.append(box.add(one.url, tag=sorted(one.tags) or [_EVERY_MESSAGE]))
        if PEOPLE in one.tags:
            added += [box.add(_to(one.url, to), tag=[tag]) for to, tag in people.items()]
    wanted = [AUDIENCE_TAG[notice.event], *people.values()]
    if not any(True for _ in box.find(tag=wanted)):
        return all(added)  # no receiver serves this audience: nobody to tell, nothing lost
    sent = box.notify(
        title=notice.title, body=notice.body, body_format=apprise.NotifyFormat.TEXT, tag=wanted
    )
    return bool(sent) and all(added)


def _to(url: str, address: str) -> str:
    """The mail server's URL with `to` set to one person's address (the URL's own `to` goes)."""
    parts = urlsplit(url)
    query = [(k, v) for k, v in parse_qsl(parts.query, keep_blank_values=True) if k != "to"]
    return urlunsplit(parts._replace(query=urlencode([*query, ("to", address)])))
