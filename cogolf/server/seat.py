"""The websocket seat: a bot connected over the network plays one side of a match.

The seat outlives any one connection. A bot that drops and reconnects with its
token gets a new connection on the same seat; the driver sees the drop and the
reconnection as inbox events and resends the open observation, so a seat that
answers in time after a reconnect is never played by the fallback.
"""

from __future__ import annotations

import asyncio
import contextlib

import msgspec
import structlog
from starlette.websockets import WebSocket, WebSocketState

from cogolf.engine.intake import Rejected
from cogolf.runtime.seats import Inbound

_encoder = msgspec.json.Encoder()
log = structlog.get_logger("cogolf.seat")


class WebSocketSeat:
    def __init__(self, slot: int) -> None:
        self.slot = slot
        self._ws: WebSocket | None = None
        self._inbox: asyncio.Queue[Inbound] | None = None
        self._epoch = 0
        self._ever = False
        self._send_lock = asyncio.Lock()
        self.claimed = False  # a connection holds this seat (set before the upgrade completes)
        self.connected_event = asyncio.Event()

    @property
    def connected(self) -> bool:
        return self._ws is not None

    @property
    def epoch(self) -> int:
        return self._epoch

    @property
    def ever_connected(self) -> bool:
        return self._ever

    def attach(self, inbox: asyncio.Queue[Inbound]) -> None:
        self._inbox = inbox

    def _post(self, item: Inbound) -> None:
        if self._inbox is not None:
            self._inbox.put_nowait(item)

    def connect(self, ws: WebSocket) -> None:
        self._ws = ws
        self._epoch += 1
        self._ever = True
        self.connected_event.set()
        self._post(Inbound(self.slot, connected=True))

    def disconnect(self, ws: WebSocket, code: int | None) -> None:
        if self._ws is not ws:
            return  # an older connection, already replaced
        self._ws = None
        self.connected_event.clear()
        if code == 1009:
            self._post(
                Inbound(
                    self.slot,
                    rejected=Rejected("oversize", "a frame exceeded the message size cap"),
                )
            )
        self._post(Inbound(self.slot, connected=False))

    def deliver(self, raw: str | bytes) -> None:
        self._post(Inbound(self.slot, raw=raw))

    async def send(self, message: msgspec.Struct) -> None:
        ws = self._ws
        if ws is None or ws.application_state is not WebSocketState.CONNECTED:
            return  # the observation is resent when the seat reconnects
        async with self._send_lock:
            await ws.send_text(_encoder.encode(message).decode())

    async def close(self) -> None:
        ws = self._ws
        if ws is not None and ws.application_state is WebSocketState.CONNECTED:
            with contextlib.suppress(Exception):
                await ws.close(code=1000)
