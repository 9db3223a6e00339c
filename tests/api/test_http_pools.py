"""The API client's transport (httpx over aiohttp) against raw servers on 127.0.0.1.

What reached the server decides each failure's kind: the API client resolves an ambiguous POST
by looking its externalId up and sends a POST again only when nothing was sent.
"""

from __future__ import annotations

import asyncio
import gzip
import json
import socket
import ssl
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager
from pathlib import Path

import httpx
import pytest
from api_support import payout_request
from support.tls import self_signed_certificate

from payflow.api import AsyncPayoutsClient
from payflow.api.errors import AmbiguousError, ConnectFailedError, is_ambiguous_for_create
from payflow.http_pools import AiohttpTransport

Answer = Callable[[bytes, asyncio.StreamWriter], Awaitable[bool]]
PAYOUT = {"id": "p-1", "externalId": "e-1", "status": "CREATED", "amount": "10", "currency": "RUB"}


class RawServer:
    """Reads each HTTP request whole and lets `answer` reply; keeps every request it read."""

    def __init__(self, answer: Answer) -> None:
        self.answer = answer
        self.requests: list[bytes] = []
        self.connections = 0

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.connections += 1
        try:
            while True:
                head = await reader.readuntil(b"\r\n\r\n")
                length = next(
                    (
                        int(line.split(b":", 1)[1])
                        for line in head.split(b"\r\n")
                        if line.lower().startswith(b"content-length:")
                    ),
                    0,
                )
                request = head + await reader.readexactly(length)
                self.requests.append(request)
                if not await self.answer(request, writer):
                    break
        except (asyncio.IncompleteReadError, ConnectionError):
            pass
        finally:
            writer.close()


@asynccontextmanager
async def raw_server(
    answer: Answer, tls: ssl.SSLContext | None = None
) -> AsyncIterator[tuple[str, RawServer]]:
    server = RawServer(answer)
    listening = await asyncio.start_server(server.serve, "127.0.0.1", 0, ssl=tls)
    port = listening.sockets[0].getsockname()[1]
    try:
        yield f"{'https' if tls else 'http'}://127.0.0.1:{port}", server
    finally:
        listening.close()


def http_answer(body: bytes, *extra: str, status: str = "200 OK") -> bytes:
    lines = [f"HTTP/1.1 {status}", f"Content-Length: {len(body)}", *extra]
    return ("\r\n".join(lines) + "\r\n\r\n").encode() + body


async def payout_answer(request: bytes, writer: asyncio.StreamWriter) -> bool:
    writer.write(http_answer(json.dumps(PAYOUT).encode(), "Content-Type: application/json"))
    await writer.drain()
    return True


def client(url: str, max_retries: int = 3) -> AsyncPayoutsClient:
    return AsyncPayoutsClient("tok-secret", base_url=url, timeout=2.0, max_retries=max_retries)


async def test_a_post_carries_each_header_once_and_its_body() -> None:
    async with raw_server(payout_answer) as (url, server), client(url) as api:
        payout = await api.create_payout(payout_request("e-1"))
    assert payout.id == "p-1"
    head, _, body = server.requests[0].partition(b"\r\n\r\n")
    fields = [line.lower().split(b": ", 1) for line in head.split(b"\r\n")[1:]]
    names = [name for name, _ in fields]
    for name in (b"x-api-token", b"accept", b"content-type", b"content-length", b"host"):
        assert names.count(name) == 1, (name, head)
    assert [b"accept", b"application/json"] in fields
    assert [b"content-type", b"application/json"] in fields
    assert json.loads(body)["externalId"] == "e-1"


async def test_a_compressed_answer_is_read_as_httpx_reads_it() -> None:
    async def gzipped(request: bytes, writer: asyncio.StreamWriter) -> bool:
        body = gzip.compress(json.dumps(PAYOUT).encode())
        writer.write(http_answer(body, "Content-Type: application/json", "Content-Encoding: gzip"))
        await writer.drain()
        return True

    async with raw_server(gzipped) as (url, _), client(url) as api:
        assert (await api.get_payout("p-1")).status == "CREATED"


async def test_a_post_whose_connection_breaks_is_ambiguous_and_never_sent_twice() -> None:
    # The first POST is answered on a connection kept alive; the second is read and the
    # connection closed without an answer, as a service that took the payout and died might.
    async def once_then_silence(request: bytes, writer: asyncio.StreamWriter) -> bool:
        if len(server.requests) == 1:
            return await payout_answer(request, writer)
        return False

    async with raw_server(once_then_silence) as (url, server), client(url) as api:
        await api.create_payout(payout_request("e-1"))
        with pytest.raises(AmbiguousError) as caught:
            await api.create_payout(payout_request("e-2"))
        await asyncio.sleep(0.1)
    assert is_ambiguous_for_create(caught.value)
    assert len(server.requests) == 2


async def test_no_answer_within_the_timeout_is_ambiguous() -> None:
    async def silent(request: bytes, writer: asyncio.StreamWriter) -> bool:
        await asyncio.sleep(5)
        return False

    async with raw_server(silent) as (url, server):
        api = AsyncPayoutsClient("tok", base_url=url, timeout=0.3, max_retries=0)
        async with api:
            with pytest.raises(AmbiguousError, match="ReadTimeout"):
                await api.create_payout(payout_request("e-1"))
    assert len(server.requests) == 1


async def test_an_answer_that_is_not_http_is_ambiguous() -> None:
    async def garbage(request: bytes, writer: asyncio.StreamWriter) -> bool:
        writer.write(b"NOT HTTP AT ALL\r\n\r\n")
        await writer.drain()
        return False

    async with raw_server(garbage) as (url, _), client(url, max_retries=0) as api:
        with pytest.raises(AmbiguousError, match="RemoteProtocolError"):
            await api.create_payout(payout_request("e-1"))


async def test_a_certificate_nobody_vouches_for_is_refused_before_anything_is_sent(
    tmp_path: Path,
) -> None:
    cert, key = self_signed_certificate(tmp_path)
    tls = ssl.create_default_context(ssl.Purpose.CLIENT_AUTH)
    tls.load_cert_chain(cert, key)
    async with raw_server(payout_answer, tls) as (url, server), client(url, max_retries=0) as api:
        with pytest.raises(ConnectFailedError, match="ConnectError"):
            await api.create_payout(payout_request("e-1"))
    assert server.requests == []


async def test_the_transport_keeps_to_its_connections_and_reads_status_and_version() -> None:
    transport = AiohttpTransport(2)
    await transport.aclose()  # nothing opened yet: nothing to close
    async with (
        raw_server(payout_answer) as (url, server),
        httpx.AsyncClient(transport=transport) as http,
    ):
        answers = await asyncio.gather(*(http.get(f"{url}/v1/payouts/p-1") for _ in range(5)))
    assert [answer.status_code for answer in answers] == [200] * 5
    assert answers[0].http_version == "HTTP/1.1"
    assert answers[0].reason_phrase == "OK"
    assert len(server.requests) == 5
    assert server.connections <= 2
    with pytest.raises(ValueError):
        AiohttpTransport(0)


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"])
async def test_a_refused_connection_says_so_without_the_address_or_its_credentials(
    host: str,
) -> None:
    listening = socket.socket()
    listening.bind(("127.0.0.1", 0))
    port = listening.getsockname()[1]
    listening.close()  # nothing listens there now
    url = f"http://user:pw-9876@{host}:{port}"
    async with client(url, max_retries=0) as api:
        with pytest.raises(ConnectFailedError) as caught:
            await api.get_payout("p-1")
    text = str(caught.value)
    # localhost may name two addresses (::1 too): asyncio then joins both failures, addresses
    # and all, into one error without a number.
    assert "Connection refused" in text or "no address of the host took" in text
    assert str(port) not in text and "pw-9876" not in text


async def test_credentials_in_the_address_are_not_sent() -> None:
    async with raw_server(payout_answer) as (url, server):
        with_credentials = url.replace("http://", "http://user:pw-9876@")
        async with client(with_credentials) as api:
            await api.get_payout("p-1")
    head = server.requests[0].lower()
    assert b"authorization" not in head and b"pw-9876" not in head
    assert head.startswith(b"get /v1/payouts/p-1 http/1.1\r\n")
