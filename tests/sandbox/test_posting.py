"""The sandbox's kept-alive webhook POSTs against real TCP servers on 127.0.0.1: connections
reused, a connection the receiver closed while idle replaced, every failure a PostFailed."""

from __future__ import annotations

import asyncio
from collections.abc import AsyncIterator, Awaitable, Callable
from contextlib import asynccontextmanager

import pytest

from payflow.sandbox.posting import KeptAlivePoster, PostFailed, Target, target_of

OK = b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 2\r\n\r\n{}"
Handler = Callable[[asyncio.StreamReader, asyncio.StreamWriter], Awaitable[None]]


@asynccontextmanager
async def serving(handler: Handler) -> AsyncIterator[tuple[Target, list[bytes]]]:
    """A TCP server on a free port; yields its target and the requests' heads it was sent."""
    heads: list[bytes] = []

    async def counted(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        heads.append(b"connection")
        try:
            await handler(reader, writer)
        finally:
            writer.close()

    server = await asyncio.start_server(counted, "127.0.0.1", 0)
    port = server.sockets[0].getsockname()[1]
    target = target_of(f"http://127.0.0.1:{port}/webhooks?x=1")
    assert target is not None
    async with server:
        yield target, heads


async def read_request(reader: asyncio.StreamReader) -> bytes:
    """One request's head and body; b"" at the end of the connection."""
    head = await reader.readuntil(b"\r\n\r\n") if not reader.at_eof() else b""
    if not head:
        return b""
    length = next(
        int(line.split(b":", 1)[1])
        for line in head.split(b"\r\n")
        if line.lower().startswith(b"content-length:")
    )
    return head + await reader.readexactly(length)


async def keep_answering(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    while True:
        try:
            request = await read_request(reader)
        except asyncio.IncompleteReadError:
            return
        if not request:
            return
        writer.write(OK)
        await writer.drain()


async def test_posts_reuse_one_connection_and_send_what_they_were_given() -> None:
    seen: list[bytes] = []

    async def recording(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        while request := await read_request(reader):
            seen.append(request)
            writer.write(OK)
            await writer.drain()

    async with serving(recording) as (target, connections):
        poster = KeptAlivePoster(timeout=2, keep=4)
        for n in range(5):
            status = await poster.post(target, b'{"n":%d}' % n, [(b"x-type", b"PAYOUT_UPDATE")])
            assert status == 200
        await poster.close()
    assert len(connections) == 1
    assert len(seen) == 5
    assert seen[0].startswith(b"POST /webhooks?x=1 HTTP/1.1\r\n")
    assert f"host: 127.0.0.1:{target.port}\r\n".encode() in seen[0]
    assert b"x-type: PAYOUT_UPDATE\r\n" in seen[0]
    assert seen[4].endswith(b'\r\n\r\n{"n":4}')


async def test_a_kept_connection_the_receiver_closed_is_replaced() -> None:
    async def one_answer_each(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(OK)
        await writer.drain()
        # The next request on this connection reads as a receiver's keep-alive timeout ends
        # it: closed with no answer, unknown to the poster until it tried.
        await read_request(reader)

    async with serving(one_answer_each) as (target, connections):
        poster = KeptAlivePoster(timeout=2, keep=4)
        assert [await poster.post(target, b"{}", []) for _ in range(3)] == [200, 200, 200]
        await poster.close()
    assert len(connections) == 3


async def test_an_answer_that_closes_the_connection_is_not_kept() -> None:
    async def chunked(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await read_request(reader)
        writer.write(
            b"HTTP/1.1 202 Accepted\r\ntransfer-encoding: chunked\r\nconnection: close\r\n\r\n"
            b"2\r\n{}\r\n0\r\n\r\n"
        )
        await writer.drain()
        await asyncio.sleep(0.5)  # the poster must not wait for this close

    async with serving(chunked) as (target, connections):
        poster = KeptAlivePoster(timeout=2, keep=4)
        assert await poster.post(target, b"{}", []) == 202
        assert await poster.post(target, b"{}", []) == 202
        await poster.close()
    assert len(connections) == 2


async def never_answers(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    await asyncio.sleep(5)


async def answers_garbage(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"this is not HTTP\r\n\r\n")
    await writer.drain()


async def closes_mid_answer(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    await read_request(reader)
    writer.write(b"HTTP/1.1 200 OK\r\ncontent-length: 100\r\n\r\n{")
    await writer.drain()


@pytest.mark.parametrize("handler", [never_answers, answers_garbage, closes_mid_answer])
async def test_a_post_with_no_whole_answer_fails(handler: Handler) -> None:
    async with serving(handler) as (target, _):
        poster = KeptAlivePoster(timeout=0.5, keep=4)
        with pytest.raises(PostFailed):
            await poster.post(target, b"{}", [])
        await poster.close()


async def test_no_server_is_a_failed_post() -> None:
    async with serving(keep_answering) as (target, _):
        pass  # closed: its port now refuses
    with pytest.raises(PostFailed):
        await KeptAlivePoster(timeout=2, keep=4).post(target, b"{}", [])


def test_only_plain_http_urls_have_a_target() -> None:
    assert target_of("https://hooks.example.com/x") is None
    assert target_of("ftp://example.com/") is None
    ipv6 = target_of("http://[::1]:8080/hook")
    assert ipv6 == Target("::1", 8080, b"[::1]:8080", b"/hook")
    assert target_of("http://example.com") == Target("example.com", 80, b"example.com", b"/")
