"""The server's connections are bounded: how many, from where, how fast they must speak.

uvicorn accepts every connection and h11 waits for request headers forever, so a
client that opens connections and never finishes its headers holds descriptors
until none are left for the sandbox. The two protocol classes here wrap uvicorn's:

- `GuardedHttp` refuses a connection over the total cap or the per-address cap
  at once (a short 503, then closed), and closes one whose first request headers
  are not complete within the header timeout.
- `PacedWebSocket` parses incoming websocket bytes a slice at a time, and only once
  the application has taken what was parsed before: a client that floods frames
  costs the event loop one slice per turn and is otherwise held back by TCP, never
  parsed in one long run. After the server has sent its close frame, at most one
  slice more is read (the peer's close reply); a flood past it is left unread.

Not covered: a request whose headers are complete but whose body trickles in
(bounded by the caps, not timed), and later requests on a kept-alive connection
(uvicorn's keep-alive timeout closes an idle one).
"""

from __future__ import annotations

import asyncio
import collections
import contextlib
import socket
from dataclasses import dataclass, field
from typing import Any

from uvicorn.protocols.http.h11_impl import H11Protocol
from uvicorn.protocols.websockets.websockets_sansio_impl import WebSocketsSansIOProtocol

SLICE_BYTES = 8192  # websocket bytes parsed per event-loop turn
RECEIVE_BUFFER = 65536  # SO_RCVBUF of every accepted connection
REFUSAL = (
    b"HTTP/1.1 503 Service Unavailable\r\ncontent-type: application/json\r\n"
    b"connection: close\r\ncontent-length: %d\r\n\r\n%s"
)


@dataclass
class ConnectionGuard:
    max_connections: int
    max_per_address: int
    header_timeout: float
    _open: dict[int, str] = field(default_factory=dict)  # id(transport) -> client address
    _per_address: collections.Counter[str] = field(default_factory=collections.Counter)

    @property
    def open_connections(self) -> int:
        return len(self._open)

    def admit(self, transport: asyncio.BaseTransport) -> str | None:
        """None when the connection may proceed (it is then counted), else why not."""
        peer = transport.get_extra_info("peername")
        address = str(peer[0]) if isinstance(peer, tuple) and peer else "?"
        if len(self._open) >= self.max_connections:
            return f"the server holds its maximum of {self.max_connections} connections"
        if self._per_address[address] >= self.max_per_address:
            return f"{address} holds its maximum of {self.max_per_address} connections"
        self._open[id(transport)] = address
        self._per_address[address] += 1
        return None

    def release(self, transport: asyncio.BaseTransport) -> None:
        address = self._open.pop(id(transport), None)
        if address is not None:
            self._per_address[address] -= 1
            if self._per_address[address] <= 0:
                del self._per_address[address]


class GuardedHttp(H11Protocol):
    guard: ConnectionGuard  # set on the per-server subclass made by `protocols`

    def connection_made(self, transport: asyncio.Transport) -> None:  # type: ignore[override]
        self._refused = self.guard.admit(transport)
        if self._refused is not None:
            body = b'{"error": "%s"}' % self._refused.encode()
            transport.write(REFUSAL % (len(body), body))
            transport.close()
            return
        sock = transport.get_extra_info("socket")
        if sock is not None:
            # A small receive window: what a flooding client can park in this server's
            # kernel buffers is bounded (frames are at most 32 KiB anyway).
            with contextlib.suppress(OSError):
                sock.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, RECEIVE_BUFFER)
        super().connection_made(transport)
        self._header_timer: asyncio.TimerHandle | None = self.loop.call_later(
            self.guard.header_timeout, self._headers_overdue
        )

    def _headers_overdue(self) -> None:
        self._header_timer = None
        if self.scope is None and not self.transport.is_closing():
            self.transport.close()  # headers never completed: the descriptor is freed

    def data_received(self, data: bytes) -> None:
        if self._refused is None:
            super().data_received(data)

    def connection_lost(self, exc: Exception | None) -> None:
        if self._refused is not None:
            return
        if self._header_timer is not None:
            self._header_timer.cancel()
        self.guard.release(self.transport)
        super().connection_lost(exc)

    def handle_websocket_upgrade(self, event: Any) -> None:
        if self._header_timer is not None:
            self._header_timer.cancel()
            self._header_timer = None
        super().handle_websocket_upgrade(event)


class PacedWebSocket(WebSocketsSansIOProtocol):
    guard: ConnectionGuard

    def connection_made(self, transport: asyncio.BaseTransport) -> None:
        self._backlog = bytearray()
        self._scheduled = False
        self._after_close = 0  # bytes read after our close frame was sent
        super().connection_made(transport)

    def connection_lost(self, exc: Exception | None) -> None:
        self._backlog.clear()
        self.guard.release(self.transport)
        super().connection_lost(exc)

    def data_received(self, data: bytes) -> None:
        self._backlog += data
        self._pump()

    def _pause(self) -> None:
        if not self.read_paused:
            self.read_paused = True
            self.transport.pause_reading()

    def _pump(self) -> None:
        if self._scheduled or not self._backlog:
            return
        if self.close_sent:
            # Past our close frame only the peer's close reply matters, a few bytes; a
            # peer still flooding is not read any further (the close timer ends it).
            self._after_close += len(self._backlog)
            if self._after_close > SLICE_BYTES:
                self._backlog.clear()
                self._pause()
                return
        if not self.queue.empty() and not self.close_sent:
            self._pause()  # the application has not taken what was parsed: wait for it
            return
        chunk = bytes(self._backlog[:SLICE_BYTES])
        del self._backlog[:SLICE_BYTES]
        super().data_received(chunk)
        if self._backlog:
            self._pause()
            self._scheduled = True
            self.loop.call_soon(self._next_slice)

    def _next_slice(self) -> None:
        self._scheduled = False
        if not self.transport.is_closing():
            self._pump()

    async def send(self, message: Any) -> None:
        await super().send(message)
        if message["type"] == "websocket.http.response.body" and not message.get("more_body"):
            # A refusal (403, 409, 410, 429) was sent in full; uvicorn would still log an
            # error ("returned without completing handshake") for each one.
            self.handshake_complete = True

    async def receive(self) -> Any:
        message = await self.queue.get()
        if self.queue.empty():
            if self._backlog:
                self._pump()
            elif self.read_paused and not self._scheduled:
                self.read_paused = False
                self.transport.resume_reading()
        return message


def protocols(guard: ConnectionGuard) -> tuple[type[GuardedHttp], type[PacedWebSocket]]:
    """The two protocol classes bound to one server's guard (uvicorn instantiates them)."""
    http = type("ServerHttp", (GuardedHttp,), {"guard": guard})
    ws = type("ServerWebSocket", (PacedWebSocket,), {"guard": guard})
    return http, ws
