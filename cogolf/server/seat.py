"""The websocket seat: a bot connected over the network plays one side of a match.

The seat outlives any one connection. A bot that drops and reconnects with its
token gets a new connection on the same seat; the driver sees the drop and the
reconnection as inbox events and resends the open observation, so a seat that
answers in time after a reconnect is never played by the fallback.

Every frame passes the seat's budget (`cogolf.server.budget`) before it reaches the
intake; `deliver` says when the connection must be closed, and with which reason.
"""

from __future__ import annotations

import asyncio
import contextlib
import time

import msgspec
import structlog
from starlette.websockets import WebSocket, WebSocketState

from cogolf import messages as m
from cogolf.engine import rules
from cogolf.engine.intake import Rejected
from cogolf.runtime.inbox import FairInbox
from cogolf.runtime.seats import Inbound, Inbox
from cogolf.server.budget import SeatBudget

_encoder = msgspec.json.Encoder()
log = structlog.get_logger("cogolf.seat")

MAX_CLOSE_REASON = 123  # bytes a websocket close reason may hold
POLICY_VIOLATION = 1008
MESSAGE_TOO_BIG = 1009
SEND_TIMEOUT = 5.0  # seconds a seat's socket may take to accept one message (a backstop)


def close_reason(text: str) -> str:
    data = text.encode()
    return (
        text if len(data) <= MAX_CLOSE_REASON else data[:MAX_CLOSE_REASON].decode(errors="ignore")
    )


class WebSocketSeat:
    def __init__(self, slot: int) -> None:
        self.slot = slot
        self._ws: WebSocket | None = None
        self._inbox: Inbox | None = None
        self._epoch = 0
        self.budget = SeatBudget()
        self._cooldown_until = 0.0  # after a policy close, no reconnection before this
        self._oversize_told = False  # the close reason said it; the driver's error is not resent
        self._stalled: WebSocket | None = None  # a connection that stopped reading
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

    def cooldown_left(self) -> float:
        return max(0.0, self._cooldown_until - time.monotonic())

    def attach(self, inbox: Inbox) -> None:
        self._inbox = inbox

    def _post(self, item: Inbound) -> None:
        if self._inbox is not None:
            self._inbox.put_nowait(item)

    def connect(self, ws: WebSocket) -> None:
        self._ws = ws
        self.budget.new_connection()
        self._epoch += 1
        self._ever = True
        self.connected_event.set()
        self._post(Inbound(self.slot, connected=True))

    def disconnect(self, ws: WebSocket, code: int | None) -> None:
        if self._ws is not ws:
            return  # an older connection, already replaced
        self._ws = None
        self.connected_event.clear()
        if code == POLICY_VIOLATION:
            self._cooldown_until = time.monotonic() + rules.SEAT_RECONNECT_COOLDOWN_SECONDS
        if code == MESSAGE_TOO_BIG:
            self._oversize_told = True
            self._post(
                Inbound(
                    self.slot,
                    rejected=Rejected("oversize", "a frame exceeded the message size cap"),
                )
            )
        self._post(Inbound(self.slot, connected=False))

    async def deliver(self, raw: str | bytes) -> tuple[int, str] | None:
        """Hand a frame to the intake if the budget allows; a refused frame is answered
        with an `over_budget` error, unread. Returns (code, reason) when the connection
        must be closed: an oversize frame, or too many refused frames."""
        size = len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))
        if size > rules.MAX_MESSAGE_BYTES:
            return MESSAGE_TOO_BIG, close_reason(
                f"oversize: a {size}-byte frame exceeds max_message_bytes "
                f"{rules.MAX_MESSAGE_BYTES}; counted as a failed attempt at the open hole"
            )
        inbox = self._inbox
        if isinstance(inbox, FairInbox):
            waiting = inbox.pending(self.slot)
        else:  # the golf driver's plain queue: one seat, everything in it is this seat's
            waiting = inbox.qsize() if isinstance(inbox, asyncio.Queue) else 0
        why = self.budget.admit(size, waiting)
        if why is None:
            self._post(Inbound(self.slot, raw=raw))
            return None
        budget = self.budget
        if budget.exhausted:
            return POLICY_VIOLATION, close_reason(
                f"policy: {budget.violations} frames refused, last {why}"
            )
        left = budget.limits.seat_violations_before_close - budget.violations
        await self.send(
            m.Error(
                hole=None,
                cause="over_budget",
                message=f"frame refused unread: {why}; "
                f"{left} more refusals close this connection with 1008",
            )
        )
        return None

    async def send(self, message: msgspec.Struct) -> None:
        ws = self._ws
        if ws is None or ws.application_state is not WebSocketState.CONNECTED:
            return  # the observation is resent when the seat reconnects
        if ws is self._stalled:
            return
        if self._oversize_told and isinstance(message, m.Error) and message.cause == "oversize":
            self._oversize_told = False  # already said in the 1009 close reason
            return
        async with self._send_lock:
            if ws is self._stalled:
                return
            try:
                await asyncio.wait_for(
                    ws.send_text(_encoder.encode(message).decode()), SEND_TIMEOUT
                )
            except TimeoutError:
                # Its buffers are full: it does not read. Sending more would hold the
                # driver (and the opponent's deadlines) again; the ping timeout closes it.
                self._stalled = ws
                log.warning("seat_not_reading", slot=self.slot)

    async def close(self) -> None:
        ws = self._ws
        if (
            ws is not None
            and ws is not self._stalled
            and ws.application_state is WebSocketState.CONNECTED
        ):
            with contextlib.suppress(Exception):
                await ws.close(code=1000)
