"""The sandbox's webhook POSTs: HTTP/1.1 over kept-alive asyncio connections, spoken by h11.

Through httpx a webhook cost the sandbox about 0.5 ms of CPU (the client's layers, httpcore's
pool, anyio's cancel scopes): more than the receiver spends recording it, on the cores the run
it serves needs. A webhook needs none of that: one POST, its status code, the body dropped.
Plain `http://` only; the sender takes httpx for anything else.
"""

from __future__ import annotations

import asyncio
from collections import defaultdict
from dataclasses import dataclass
from functools import lru_cache
from urllib.parse import urlsplit

import h11

READ_SIZE = 65536


class PostFailed(Exception):
    """No answer: the connection could not be made, broke, spoke bad HTTP or timed out."""


class _Unanswered(Exception):
    """A kept-alive connection that failed before any byte of an answer (the receiver had
    closed it while it was idle): the POST may go again on a new connection."""


@dataclass(frozen=True, slots=True)
class Target:
    """Where a URL's POSTs go: the address, the Host header and the request target."""

    host: str
    port: int
    host_header: bytes
    path: bytes


@lru_cache(maxsize=256)
def target_of(url: str) -> Target | None:
    """The target of a plain `http://` URL; None for any other (httpx sends those)."""
    parts = urlsplit(url)
    if parts.scheme != "http" or not parts.hostname:
        return None
    path = (parts.path or "/") + (f"?{parts.query}" if parts.query else "")
    return Target(parts.hostname, parts.port or 80, parts.netloc.encode("ascii"), path.encode())


@dataclass(slots=True)
class _Connection:
    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    protocol: h11.Connection

    def usable(self) -> bool:
        return not self.reader.at_eof() and not self.writer.is_closing()

    def close(self) -> None:
        self.writer.close()


class KeptAlivePoster:
    """POSTs to plain-http URLs, reusing idle connections (at most `keep` per address)."""

    def __init__(self, timeout: float, keep: int) -> None:
        self._timeout = timeout
        self._keep = keep
        self._idle: defaultdict[tuple[str, int], list[_Connection]] = defaultdict(list)

    async def post(self, target: Target, body: bytes, headers: list[tuple[bytes, bytes]]) -> int:
        """POST `body` and return the answer's status code; PostFailed when none came in time."""
        address = (target.host, target.port)
        request = h11.Request(
            method=b"POST",
            target=target.path,
            headers=[
                (b"host", target.host_header),
                (b"content-length", str(len(body)).encode()),
                *headers,
            ],
        )
        try:
            async with asyncio.timeout(self._timeout):
                connection = self._take_idle(address)
                if connection is not None:
                    try:
                        return await self._exchange(connection, address, request, body)
                    except _Unanswered:
                        pass  # closed while idle: once more, on a new connection
                connection = await self._open(address)
                try:
                    return await self._exchange(connection, address, request, body)
                except _Unanswered as exc:
                    raise PostFailed(str(exc)) from None
        except TimeoutError:
            raise PostFailed(f"no answer within {self._timeout} s") from None
        except OSError as exc:
            raise PostFailed(str(exc)) from None

    async def close(self) -> None:
        """Close the idle connections."""
        for connections in self._idle.values():
            for connection in connections:
                connection.close()
        self._idle.clear()

    def _take_idle(self, address: tuple[str, int]) -> _Connection | None:
        idle = self._idle[address]
        while idle:
            connection = idle.pop()
            if connection.usable():
                return connection
            connection.close()
        return None

    async def _open(self, address: tuple[str, int]) -> _Connection:
        reader, writer = await asyncio.open_connection(*address, limit=READ_SIZE)
        return _Connection(reader, writer, h11.Connection(our_role=h11.CLIENT))

    async def _exchange(
        self, connection: _Connection, address: tuple[str, int], request: h11.Request, body: bytes
    ) -> int:
        """One request and its answer on `connection`, which goes back to the idle ones only
        when both sides are done with the exchange; closed otherwise (a timeout included)."""
        protocol = connection.protocol
        answered = False
        kept = False
        try:
            data = protocol.send(request) or b""
            data += protocol.send(h11.Data(data=body)) or b""
            data += protocol.send(h11.EndOfMessage()) or b""
            connection.writer.write(data)
            await connection.writer.drain()
            status = 0
            while True:
                event = protocol.next_event()
                if event is h11.NEED_DATA:
                    chunk = await connection.reader.read(READ_SIZE)
                    answered = answered or bool(chunk)
                    protocol.receive_data(chunk)
                elif isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    raise _Unanswered("the connection closed before an answer")
            if protocol.our_state is h11.DONE and protocol.their_state is h11.DONE:
                protocol.start_next_cycle()
                idle = self._idle[address]
                if len(idle) < self._keep:
                    idle.append(connection)
                    kept = True
            return status
        except (OSError, h11.ProtocolError) as exc:
            if answered:
                raise PostFailed(f"the answer broke off: {exc}") from None
            raise _Unanswered(str(exc) or type(exc).__name__) from None
        finally:
            if not kept:
                connection.close()
