"""A bot's relay forwards the websocket of its own seats and nothing else (`league.seatgate`).

The head checks run on bytes; the relay runs between real sockets in front of a real
server that has no admin token (as every night's server had), so a request that got
through would be seen creating a match.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import websockets

from cogolf.league.seatgate import (
    MAX_HEAD_BYTES,
    MAX_NOTES,
    HeadError,
    SeatGate,
    head_problem,
    read_head,
    seat_target,
)
from cogolf.server.run import RunningServer
from tests.server.helpers import create, recv, running_server

HOST = "127.0.0.1:4567"
SEAT = "/matches/n-a-vs-b/player?slot=0&token=abcdefgh12345678"
TARGETS = {SEAT}
UPGRADE = (
    "Upgrade: websocket\r\nConnection: Upgrade\r\n"
    "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 13\r\n"
)


def head(line: str = f"GET {SEAT} HTTP/1.1", host: str = f"Host: {HOST}\r\n",
         rest: str = UPGRADE) -> bytes:
    return f"{line}\r\n{host}{rest}\r\n".encode()


def test_the_seat_url_of_a_bot_is_its_one_target():
    assert seat_target(f"ws://{HOST}{SEAT}") == SEAT
    assert head_problem(head(), TARGETS, HOST) is None
    # Header names in any case, Connection with more tokens, Host in upper case.
    honest = head(host=f"HOST: {HOST.upper()}\r\n",
                  rest=UPGRADE.replace("Connection: Upgrade", "connection: keep-alive, Upgrade"))
    assert head_problem(honest, TARGETS, HOST) is None


@pytest.mark.parametrize(
    ("raw", "why"),
    [
        # Requests of the server that are not a seat.
        (head(f"POST {SEAT} HTTP/1.1"), "only GET"),
        (head("GET /matches HTTP/1.1", rest=""), "not one of this bot's seat URLs"),
        (head("GET /matches/n-a-vs-b/watch HTTP/1.1"), "not one of this bot's seat URLs"),
        (head(f"GET {SEAT.replace('slot=0', 'slot=1')} HTTP/1.1"), "not one of"),
        (head(f"get {SEAT} HTTP/1.1"), "only GET"),
        (head(f"GET {SEAT} HTTP/1.0"), "the request line"),
        (head(f"GET  {SEAT} HTTP/1.1"), "the request line"),
        (head(f"GET {SEAT} HTTP/1.1 x"), "the request line"),
        # Path tricks: no normalisation, no decoding, no other form of the target.
        (head(f"GET {SEAT.replace('/player', '/player/../..')} HTTP/1.1"), "not one of"),
        (head("GET /matches/n-a-vs-b/player/../../matches HTTP/1.1"), "not one of"),
        (head(f"GET {SEAT.replace('/player', '/%2e%2e/player')} HTTP/1.1"), "not one of"),
        (head(f"GET {SEAT.replace('n-a', 'n%2Da')} HTTP/1.1"), "not one of"),
        (head(f"GET /{SEAT} HTTP/1.1"), "not one of"),
        (head(f"GET http://{HOST}{SEAT} HTTP/1.1"), "not one of"),
        (head(f"GET {SEAT}&slot=1 HTTP/1.1"), "not one of"),
        (head(f"GET {SEAT}#x HTTP/1.1"), "not one of"),
        (head("GET /matches/n-a-vs-b/player?token=abcdefgh12345678&slot=0 HTTP/1.1"),
         "not one of"),
        # Host header games.
        (head(host=""), "exactly one Host header"),
        (head(host=f"Host: {HOST}\r\nHost: {HOST}\r\n"), "exactly one Host header"),
        (head(host=f"Host: {HOST}\r\nHost: 10.0.0.1\r\n"), "exactly one Host header"),
        (head(host="Host: localhost:4567\r\n"), "exactly one Host header"),
        (head(host="Host: 127.0.0.1\r\n"), "exactly one Host header"),
        (head(host="Host: 127.0.0.1:4568\r\n"), "exactly one Host header"),
        (head(host=f"Host: {HOST}@evil\r\n"), "exactly one Host header"),
        (head(host=f"Host : {HOST}\r\n"), "not 'Name: value'"),
        (head(host=f"Host:\r\n {HOST}\r\n"), "not 'Name: value'"),  # a folded line
        # What a parser could read differently, or a body that could hide a request.
        (head(rest=UPGRADE + "Content-Length: 0\r\n"), "has no body"),
        (head(rest=UPGRADE + "Transfer-Encoding: chunked\r\n"), "has no body"),
        (head(rest=UPGRADE + "X-A: b\nX-C: d\r\n"), "printable ASCII"),
        (head(rest=UPGRADE + "X-A: b\rX-C: d\r\n"), "printable ASCII"),
        (head(rest=UPGRADE + "X-A: \x00\r\n"), "printable ASCII"),
        (head(rest=UPGRADE + "X-A: caf\u00e9\r\n"), "printable ASCII"),
        (head(rest=UPGRADE + "no colon\r\n"), "not 'Name: value'"),
        # Not a websocket upgrade.
        (head(rest=""), "Upgrade: websocket"),
        (head(rest=UPGRADE.replace("websocket", "h2c")), "Upgrade: websocket"),
        (head(rest=UPGRADE + "Upgrade: websocket\r\n"), "Upgrade: websocket"),
        (head(rest=UPGRADE.replace("Connection: Upgrade", "Connection: keep-alive")),
         "Connection: Upgrade"),
        (head()[:-2], "blank line"),
    ],
)
def test_every_other_request_head_is_refused(raw: bytes, why: str):
    problem = head_problem(raw, TARGETS, HOST)
    assert problem is not None and why in problem, problem


async def _fed(data: bytes, *, eof: bool = True) -> asyncio.StreamReader:
    reader = asyncio.StreamReader()
    reader.feed_data(data)
    if eof:
        reader.feed_eof()
    return reader


def test_a_head_is_read_up_to_its_bound_and_what_follows_is_kept_apart():
    async def go() -> None:
        exact = head(rest=UPGRADE + "X-Pad: \r\n")
        exact = exact.replace(b"X-Pad: ", b"X-Pad: " + b"a" * (MAX_HEAD_BYTES - len(exact)))
        assert len(exact) == MAX_HEAD_BYTES
        got, rest = await read_head(await _fed(exact + b"POST /matches HTTP/1.1\r\n\r\n"))
        assert got == exact and rest == b""  # never reads past the bound
        over = exact.replace(b"X-Pad: a", b"X-Pad: aa")
        with pytest.raises(HeadError, match=f"first {MAX_HEAD_BYTES} bytes"):
            await read_head(await _fed(over))
        short = head()
        got, rest = await read_head(await _fed(short + b"POST /matches"))
        assert (got, rest) == (short, b"POST /matches")
        with pytest.raises(HeadError, match="closed before"):
            await read_head(await _fed(short[:-1]))
        with pytest.raises(HeadError, match=r"within 0\.2 s"):
            await read_head(await _fed(short[:-1], eof=False), seconds=0.2)

    asyncio.run(go())


@contextlib.asynccontextmanager
async def relayed(server: RunningServer, targets: set[str],
                  **bounds: float) -> AsyncIterator[tuple[SeatGate, int, list[str]]]:
    """A relay on its own port in front of `server`, as a bot's launcher runs it."""
    notes: list[str] = []
    gate = SeatGate(port=int(server.url.rsplit(":", 1)[1]), host="", note=notes.append,
                    **bounds)  # type: ignore[arg-type]
    relay = await asyncio.start_server(gate.serve, "127.0.0.1", 0)
    port = relay.sockets[0].getsockname()[1]
    gate.host = f"127.0.0.1:{port}"
    gate.targets = targets
    try:
        yield gate, port, notes
    finally:
        relay.close()


async def exchange(port: int, data: bytes, *, head_only: bool = False) -> bytes:
    """Send `data`, read until the other side closes (or only the answer's head)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(data)
    await writer.drain()
    try:
        read = reader.readuntil(b"\r\n\r\n") if head_only else reader.read()
        return await asyncio.wait_for(read, 10.0)
    finally:
        writer.close()


def local(url: str, port: int) -> str:
    """The seat URL as the bot sees it: the same path on the relay's port."""
    return f"ws://127.0.0.1:{port}{seat_target(url)}"


def test_the_relay_forwards_a_seat_and_refuses_the_rest(tmp_path: Path):
    """One real server without an admin token: a refused request would create a match."""

    async def go() -> None:
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=1)
            async with relayed(server, {seat_target(urls[0])}) as (gate, port, notes):
                seat = local(urls[0], port)
                async with websockets.connect(seat) as ws:
                    welcome = await recv(ws, "welcome")
                    assert welcome["slot"] == 0
                    # The same seat again, with a request pipelined behind the upgrade:
                    # the server refuses the upgrade (the seat is taken) and the POST
                    # never reaches it.
                    body = json.dumps({"match_id": "forged-by-a-bot"}).encode()
                    post = (b"POST /matches HTTP/1.1\r\nHost: x\r\nContent-Type: "
                            b"application/json\r\nContent-Length: %d\r\n\r\n%s"
                            % (len(body), body))
                    upgrade = head(f"GET {seat_target(seat)} HTTP/1.1",
                                   f"Host: 127.0.0.1:{port}\r\n")
                    answer = await exchange(port, upgrade + post)
                    assert answer.startswith(b"HTTP/1.1 409 "), answer[:80]
                    assert b"201" not in answer
                    # Everything that is not the seat: refused by the relay, with the reason.
                    refused = [
                        post,
                        b"GET /matches HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % port,
                        head(f"GET /matches/{match_id}/watch HTTP/1.1",
                             f"Host: 127.0.0.1:{port}\r\n"),
                        head(f"GET {seat_target(urls[1])} HTTP/1.1",
                             f"Host: 127.0.0.1:{port}\r\n"),
                    ]
                    for raw in refused:
                        answer = await exchange(port, raw)
                        assert answer.startswith(b"HTTP/1.1 403 Forbidden\r\n"), answer[:80]
                    assert set(server.registry.matches) == {match_id}
                    assert gate.refused == len(refused)
                    assert notes[0] == (
                        "relay refused 'POST /matches HTTP/1.1': only GET is forwarded")
            # Pinned bounds through the relay: a head of the most bytes reaches the server
            # (which answers it), one byte more is refused unread, and so is a slow head.
            async with relayed(server, {seat_target(urls[1])}, head_seconds=0.3) as (_, port, _):
                exact = head(f"GET {seat_target(urls[1])} HTTP/1.1",
                             f"Host: 127.0.0.1:{port}\r\n", UPGRADE + "X-Pad: \r\n")
                exact = exact.replace(b"X-Pad: ",
                                      b"X-Pad: " + b"a" * (MAX_HEAD_BYTES - len(exact)))
                assert len(exact) == MAX_HEAD_BYTES
                answer = await exchange(port, exact, head_only=True)
                assert answer.startswith(b"HTTP/1.1 101 "), answer[:80]
                over = exact.replace(b"X-Pad: a", b"X-Pad: aa")
                answer = await exchange(port, over)
                assert answer.startswith(b"HTTP/1.1 403 ") and b"first 8192 bytes" in answer
                answer = await exchange(port, exact[:100])  # and then nothing
                assert answer.startswith(b"HTTP/1.1 403 ") and b"within 0.3 s" in answer
            assert set(server.registry.matches) == {match_id}

    asyncio.run(go())


def test_a_flood_of_refusals_logs_only_the_first(tmp_path: Path):
    async def go() -> None:
        notes: list[str] = []
        gate = SeatGate(port=1, host=HOST, targets=set(TARGETS), note=notes.append)
        relay = await asyncio.start_server(gate.serve, "127.0.0.1", 0)
        port = relay.sockets[0].getsockname()[1]
        try:
            for _ in range(MAX_NOTES + 5):
                answer = await exchange(port, b"GET /matches HTTP/1.1\r\n\r\n")
                assert answer.startswith(b"HTTP/1.1 403 ")
        finally:
            relay.close()
        assert gate.refused == MAX_NOTES + 5
        assert len(notes) == MAX_NOTES + 1 and "further refusals are not logged" in notes[-1]

    asyncio.run(go())


def test_a_pooled_bots_seats_are_let_through_as_its_launcher_passes_them_on():
    """What the launcher reads on its stdin reaches the bot only after the relay knows it;
    a seat URL of the most bytes is passed on, one byte more ends the feed."""
    from cogolf.league.botwall import MAX_SEAT_LINE, _feed_seats

    def url(size: int) -> str:
        base = "ws://127.0.0.1:4567/matches/m/player?slot=0&token="
        return base + "t" * (size - len(base))

    async def go() -> None:
        gate = SeatGate(port=4567, host=HOST)
        read, write = os.pipe()
        lines = [url(80), url(MAX_SEAT_LINE), url(MAX_SEAT_LINE + 1), url(90)]
        os.write(write, "".join(f"{u}\n" for u in lines).encode())
        os.close(write)
        bot = await asyncio.create_subprocess_exec(
            "cat", stdin=asyncio.subprocess.PIPE, stdout=asyncio.subprocess.PIPE)
        with os.fdopen(read, "rb") as source:
            await _feed_seats(bot, gate, source)
        out, _ = await bot.communicate()
        assert out.decode().splitlines() == lines[:2]  # and then its stdin was closed
        assert gate.targets == {seat_target(u) for u in lines[:2]}

    asyncio.run(go())
