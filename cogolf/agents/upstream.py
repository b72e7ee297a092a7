"""The gateway's one request to a provider: a POST over a pooled HTTP/1.1 connection.

Built on h11 over asyncio streams rather than an HTTP client library: measured on
loopback (`cogolf bench agent`, which runs both side by side), httpx's asyncio client
added 3 to 7 ms per call where h11 on a kept-alive connection adds about 0.5 ms, and
the gateway needs nothing of a client but one POST. What a hostile provider could do
with a client is cut here: no redirect is ever followed (its status is returned as
it is), a reply is refused past `limit` bytes, a connection is reused only after a
reply read to its end, and the caller's timeout bounds the whole exchange.
"""

from __future__ import annotations

import asyncio
import contextlib
import ssl
from urllib.parse import urlsplit

import h11

IDLE_PER_ORIGIN = 16  # kept-alive connections per provider address
READ_CHUNK = 1 << 16

Origin = tuple[str, str, int]  # scheme, host, port


class UpstreamError(OSError):
    """The provider's connection failed or spoke no HTTP/1.1."""


class _Connection:
    def __init__(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self.reader, self.writer = reader, writer
        self.h11 = h11.Connection(h11.CLIENT)

    def close(self) -> None:
        with contextlib.suppress(Exception):
            self.writer.close()


class Upstream:
    """Kept-alive connections to the providers of one gateway (one event loop)."""

    def __init__(self) -> None:
        self._idle: dict[Origin, list[_Connection]] = {}
        self._tls: ssl.SSLContext | None = None

    async def _open(self, origin: Origin) -> _Connection:
        scheme, host, port = origin
        tls = None
        if scheme == "https":
            self._tls = self._tls or ssl.create_default_context()
            tls = self._tls
        try:
            reader, writer = await asyncio.open_connection(host, port, ssl=tls,
                                                           limit=READ_CHUNK)
        except (OSError, ssl.SSLError) as exc:
            raise ConnectionError(f"cannot connect to {host}:{port}: {exc}") from exc
        return _Connection(reader, writer)

    async def post(self, url: str, headers: dict[str, str], payload: bytes,
                   limit: int) -> tuple[int, bytes]:
        """(status, body) of POST `url`; UpstreamError past `limit` bytes of body."""
        parts = urlsplit(url)
        scheme = parts.scheme
        port = parts.port or (443 if scheme == "https" else 80)
        origin = (scheme, parts.hostname or "", port)
        target = parts.path or "/"
        if parts.query:
            target += "?" + parts.query
        host = parts.netloc.rpartition("@")[2]
        fields = [("host", host), *headers.items(), ("content-length", str(len(payload)))]
        request = h11.Request(method="POST", target=target, headers=fields)
        idle = self._idle.setdefault(origin, [])
        while idle:  # a kept-alive connection the provider closed meanwhile is tried anew
            conn = idle.pop()
            try:
                return await self._exchange(conn, origin, request, payload, limit)
            except _Stale:
                conn.close()
        conn = await self._open(origin)
        try:
            return await self._exchange(conn, origin, request, payload, limit)
        except _Stale as exc:
            raise UpstreamError("the provider closed the connection without a reply") from exc

    async def _exchange(self, conn: _Connection, origin: Origin, request: h11.Request,
                        payload: bytes, limit: int) -> tuple[int, bytes]:
        got_any = False
        done = False
        try:
            h = conn.h11
            conn.writer.write(h.send(request) + h.send(h11.Data(data=payload))
                              + h.send(h11.EndOfMessage()))
            await conn.writer.drain()
            status, body = 0, bytearray()
            while True:
                event = h.next_event()
                if event is h11.NEED_DATA:
                    data = await conn.reader.read(READ_CHUNK)
                    if not data and not got_any:
                        raise _Stale()
                    got_any = True
                    h.receive_data(data)
                    continue
                if isinstance(event, h11.Response):
                    status = event.status_code
                elif isinstance(event, h11.Data):
                    body += event.data
                    if len(body) > limit:
                        raise UpstreamError(f"the reply is over {limit} bytes")
                elif isinstance(event, h11.EndOfMessage):
                    break
                elif isinstance(event, h11.ConnectionClosed):
                    raise UpstreamError("the provider closed the connection mid-reply")
            done = True
            return status, bytes(body)
        except (ConnectionError, OSError) as exc:
            if not got_any and not isinstance(exc, UpstreamError):
                raise _Stale() from exc
            raise
        except h11.ProtocolError as exc:
            raise UpstreamError(f"the provider's reply is not HTTP/1.1 ({exc})") from None
        finally:
            kept = False
            if done and conn.h11.our_state is h11.DONE and conn.h11.their_state is h11.DONE:
                with contextlib.suppress(h11.ProtocolError):
                    conn.h11.start_next_cycle()
                    idle = self._idle.setdefault(origin, [])
                    if len(idle) < IDLE_PER_ORIGIN:
                        idle.append(conn)
                        kept = True
            if not kept:
                conn.close()

    async def close(self) -> None:
        for conns in self._idle.values():
            for conn in conns:
                conn.close()
        self._idle.clear()


class _Stale(Exception):
    """A kept-alive connection that gave no byte of a reply: the request is sent anew."""
