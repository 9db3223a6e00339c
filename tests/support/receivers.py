"""Real receivers of notifications on 127.0.0.1: a JSON webhook sink (what apprise's json://
posts) and an SMTP server (aiosmtpd) keeping every mail it gets."""

from __future__ import annotations

import json
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from email import message_from_bytes
from email.message import Message
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

from aiosmtpd.controller import Controller

from support.servers import free_port


class JsonSink:
    """Every JSON body POSTed to it, in order; `url` is its apprise URL (json://...)."""

    def __init__(self) -> None:
        self.bodies: list[dict[str, Any]] = []
        sink = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self) -> None:
                length = int(self.headers.get("Content-Length", 0))
                sink.bodies.append(json.loads(self.rfile.read(length)))
                self.send_response(200)
                self.end_headers()

            def log_message(self, *args: object) -> None:
                pass

        self._server = ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.port = self._server.server_address[1]
        self.url = f"json://127.0.0.1:{self.port}/notify"
        threading.Thread(target=self._server.serve_forever, daemon=True).start()

    def close(self) -> None:
        self._server.shutdown()
        self._server.server_close()


class _Keep:
    def __init__(self) -> None:
        self.mails: list[Message] = []

    async def handle_DATA(self, server: object, session: object, envelope: Any) -> str:
        self.mails.append(message_from_bytes(envelope.content))
        return "250 OK"


class SmtpSink:
    """An SMTP server on 127.0.0.1 keeping each mail; `url` is its apprise URL (mailto://...)."""

    def __init__(self) -> None:
        self._keep = _Keep()
        self.port = free_port()
        self._controller = Controller(self._keep, hostname="127.0.0.1", port=self.port)
        self._controller.start()
        self.url = (
            f"mailto://127.0.0.1:{self.port}?from=payflow@example.com&to=ops@example.com"
            "&mode=insecure"
        )

    @property
    def mails(self) -> list[Message]:
        return self._keep.mails

    def close(self) -> None:
        self._controller.stop()


def mail_text(mail: Message) -> str:
    """The subject and the plain-text body of a mail."""
    parts = [mail.get("Subject", "")]
    for part in mail.walk():
        if part.get_content_type() == "text/plain":
            payload = part.get_payload(decode=True)
            if isinstance(payload, bytes):
                parts.append(payload.decode(part.get_content_charset() or "utf-8"))
    return "\n".join(parts)


@contextmanager
def receivers() -> Iterator[tuple[JsonSink, SmtpSink]]:
    """A JSON sink and an SMTP sink, stopped at the end."""
    json_sink, smtp_sink = JsonSink(), SmtpSink()
    try:
        yield json_sink, smtp_sink
    finally:
        json_sink.close()
        smtp_sink.close()
