"""What a bot's relay lets through: the websocket of a seat it was given, nothing else.

A walled bot reaches the night's server only through the relay its launcher
runs (`botwall`). That server also answers `POST /matches`, `GET /matches`, the
watch websockets and every other match's seats, none of which are a bot's
business. So the relay reads each connection's request head first (at most
`MAX_HEAD_BYTES`, within `HEAD_SECONDS`) and forwards it only when it is a
websocket upgrade `GET` of exactly one of the bot's seat targets (the path and
query of a seat URL it was given, byte for byte), with one `Host` naming the
server and no body; anything else gets a plain 403 and is closed. What the
client sends after the head is held back until the server has switched
protocols, and a refused upgrade closes the connection, so the server never
parses a second request on it.

The check is strict rather than clever: no path normalisation, no percent
decoding, no absolute-form targets, CRLF line ends and printable ASCII only, so
nothing the server's HTTP parser could read differently gets through.
"""

from __future__ import annotations

import asyncio
import contextlib
import re
from collections.abc import Callable, Collection
from dataclasses import dataclass, field
from urllib.parse import urlsplit

MAX_HEAD_BYTES = 8192  # a request head, its closing blank line included
HEAD_SECONDS = 5.0  # from the connection's accept to the end of its head
ANSWER_SECONDS = 30.0  # for the server's answer to a forwarded upgrade
MAX_ANSWER_BYTES = 65536  # the server's answer head
MAX_NOTES = 20  # refusals written to the bot's log; later ones are only counted
CHUNK = 1 << 16
_END = b"\r\n\r\n"
_FIELD_NAME = re.compile(rb"[!#$%&'*+.^_`|~0-9A-Za-z-]+")  # an RFC 9110 token
_PRINTABLE = re.compile(rb"[\t\x20-\x7e]*")


class HeadError(ValueError):
    """A request head that was not read: too long, too slow, or cut short."""


def seat_target(url: str) -> str:
    """The request target a client sends for `url`: its path and query, as written."""
    parts = urlsplit(url)
    return parts.path + (f"?{parts.query}" if parts.query else "")


async def read_head(
    reader: asyncio.StreamReader, most: int = MAX_HEAD_BYTES, seconds: float = HEAD_SECONDS
) -> tuple[bytes, bytes]:
    """The head (up to and with its blank line) and whatever came after it in the same
    reads. Never reads more than `most` bytes; HeadError when no head ends within them."""
    buf = bytearray()
    searched = 0
    try:
        async with asyncio.timeout(seconds):
            while (end := buf.find(_END, max(0, searched - 3))) < 0:
                searched = len(buf)
                if len(buf) >= most:
                    raise HeadError(f"no end of the request head in its first {most} bytes")
                chunk = await reader.read(most - len(buf))
                if not chunk:
                    raise HeadError("the connection closed before the end of its head")
                buf += chunk
    except TimeoutError:
        raise HeadError(f"the request head did not end within {seconds:g} s") from None
    end += len(_END)
    return bytes(buf[:end]), bytes(buf[end:])


def head_problem(head: bytes, targets: Collection[str], host: str) -> str | None:
    """Why `head` is not a websocket upgrade of one of `targets` on `host`; None when it is."""
    if not head.endswith(_END):
        return "the head does not end with a blank line"
    lines = head[: -len(_END)].split(b"\r\n")
    for line in lines:
        if not _PRINTABLE.fullmatch(line):
            return "only printable ASCII, lines ending in CRLF, is forwarded"
    parts = lines[0].split(b" ")
    if len(parts) != 3 or parts[2] != b"HTTP/1.1":
        return "the request line is not 'GET <seat path> HTTP/1.1'"
    method, target = parts[0], parts[1].decode("ascii")
    if method != b"GET":
        return "only GET is forwarded"
    if target not in targets:
        return "the request target is not one of this bot's seat URLs"
    fields: dict[str, list[str]] = {}
    for line in lines[1:]:
        name, colon, value = line.partition(b":")
        if not colon or not _FIELD_NAME.fullmatch(name):  # folded lines, ' :' and the like
            return "a header line is not 'Name: value'"
        fields.setdefault(name.decode("ascii").lower(), []).append(
            value.strip(b" \t").decode("ascii")
        )
    if [v.lower() for v in fields.get("host", [])] != [host.lower()]:
        return f"the request needs exactly one Host header, {host}"
    if "content-length" in fields or "transfer-encoding" in fields:
        return "a websocket upgrade has no body"
    if [v.lower() for v in fields.get("upgrade", [])] != ["websocket"]:
        return "not a websocket upgrade (Upgrade: websocket)"
    tokens = {t.strip().lower() for v in fields.get("connection", []) for t in v.split(",")}
    if "upgrade" not in tokens:
        return "not a websocket upgrade (Connection: Upgrade)"
    return None


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(CHUNK):
            writer.write(chunk)
            await writer.drain()
    except (OSError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(OSError, ConnectionError):
            writer.close()


def _quiet(line: str) -> None:
    return None


@dataclass
class SeatGate:
    """One bot's relay to the server on `port`: the seats it may reach and its bounds."""

    port: int
    host: str  # what the Host header must say: the seat URLs' host:port
    targets: set[str] = field(default_factory=set)
    note: Callable[[str], None] = _quiet  # a line for the bot's log
    head_bytes: int = MAX_HEAD_BYTES
    head_seconds: float = HEAD_SECONDS
    refused: int = 0

    @classmethod
    def for_url(cls, url: str, note: Callable[[str], None] = _quiet) -> SeatGate:
        """A gate to the server of `url` (a seat URL, or the server's own), with no seat yet."""
        parts = urlsplit(url)
        if parts.port is None:
            raise ValueError(f"no port in {url!r}")
        return cls(port=parts.port, host=parts.netloc, note=note)

    def allow(self, url: str) -> None:
        """Let the bot reach the seat at `url` (a pooled bot learns its seats one by one)."""
        if url.strip():
            self.targets.add(seat_target(url.strip()))

    async def _refuse(self, writer: asyncio.StreamWriter, why: str, line: bytes) -> None:
        self.refused += 1
        if self.refused <= MAX_NOTES:
            shown = line[:120].decode("ascii", "replace")
            self.note(f"relay refused {shown!r}: {why}")
            if self.refused == MAX_NOTES:
                self.note(f"relay: further refusals are not logged (after {MAX_NOTES})")
        body = f"{why}\n".encode()
        writer.write(
            b"HTTP/1.1 403 Forbidden\r\nContent-Type: text/plain; charset=utf-8\r\n"
            b"Content-Length: %d\r\nConnection: close\r\n\r\n%s" % (len(body), body)
        )
        with contextlib.suppress(OSError, ConnectionError, TimeoutError):
            await asyncio.wait_for(writer.drain(), self.head_seconds)
        writer.close()

    async def serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        """Relay one connection from the bot, or refuse it."""
        try:
            head, rest = await read_head(reader, self.head_bytes, self.head_seconds)
        except HeadError as exc:
            await self._refuse(writer, str(exc), b"")
            return
        problem = head_problem(head, self.targets, self.host)
        if problem is not None:
            await self._refuse(writer, problem, head.split(b"\r\n", 1)[0])
            return
        try:
            up_reader, up_writer = await asyncio.open_connection("127.0.0.1", self.port)
        except OSError:
            writer.close()
            return
        try:
            up_writer.write(head)
            try:
                answer, early = await read_head(up_reader, MAX_ANSWER_BYTES, ANSWER_SECONDS)
            except HeadError:
                return
            writer.write(answer + early)
            if not answer.startswith(b"HTTP/1.1 101 "):
                # The refusal's body, then the end: the bot's later bytes are never sent.
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(_pipe(up_reader, writer), ANSWER_SECONDS)
                return
            up_writer.write(rest)
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))
        finally:
            for w in (up_writer, writer):
                with contextlib.suppress(OSError, ConnectionError):
                    w.close()
