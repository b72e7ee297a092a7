"""Seats: one interface for everything that can play a side of a match.

The driver sends a seat messages (welcome, observation, ack, error, done) and a
seat delivers what its player answered to the driver's inbox. This module has
the in-process seat, which runs a policy function on a daemon thread so that a
policy that hangs can miss its deadline without stalling the match; the
websocket seat lives with the server.
"""

from __future__ import annotations

import asyncio
import contextlib
import threading
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any, Protocol

import msgspec

from cogolf import messages as m
from cogolf.bots.policy import Observation, Policy, complete_play
from cogolf.bots.substitute import marked, raised
from cogolf.engine.intake import Rejected, encode_play


@dataclass(frozen=True)
class Inbound:
    """Something a seat delivered: raw submission text, or a failure found on its side."""

    slot: int
    raw: str | bytes | None = None
    rejected: Rejected | None = None
    connected: bool | None = None  # a (re)connection or a drop


class Inbox(Protocol):
    """Where a seat puts what it delivered (an asyncio.Queue, or the driver's FairInbox)."""

    def put_nowait(self, item: Inbound) -> None: ...


class Seat(Protocol):
    slot: int

    @property
    def connected(self) -> bool: ...

    @property
    def epoch(self) -> int:
        """Counts connections; a new epoch means the seat has not seen the open observation."""
        ...

    @property
    def ever_connected(self) -> bool: ...

    def attach(self, inbox: Inbox) -> None: ...

    async def send(self, message: msgspec.Struct) -> None: ...

    async def close(self) -> None: ...


class InProcessSeat:
    """Plays a policy in this process. Observations are passed as plain dicts."""

    def __init__(
        self, slot: int, policy: Policy, fallback: Callable[[Observation], Any] | None = None
    ) -> None:
        self.slot = slot
        self.policy = policy
        # What a policy that keeps its own deadline (an LLM player) plays when it gives up,
        # as a `cogolf bot` process would (marked as the seat's own fallback); any other
        # policy's failure is the seat's host_error.
        self.fallback = fallback
        self._inbox: Inbox | None = None
        self._loop: asyncio.AbstractEventLoop | None = None
        self.deadline: float | None = None  # seconds of the last observation

    @property
    def connected(self) -> bool:
        return True

    @property
    def epoch(self) -> int:
        return 0

    @property
    def ever_connected(self) -> bool:
        return True

    def attach(self, inbox: Inbox) -> None:
        self._inbox = inbox
        self._loop = asyncio.get_running_loop()

    async def send(self, message: msgspec.Struct) -> None:
        if isinstance(message, m.Observation):
            doc = msgspec.to_builtins(message.observation)
            self.deadline = message.deadline_seconds  # for a policy that keeps it (an LLM)
            threading.Thread(
                target=self._think, args=(doc, message.hole), daemon=True, name=f"seat{self.slot}"
            ).start()

    def _think(self, observation: dict[str, Any], hole: int) -> None:
        keeps_deadline = getattr(self.policy, "wants_budget", False)
        try:
            if self.deadline is not None and keeps_deadline:
                try:
                    value = self.policy(observation, budget=self.deadline)  # type: ignore[call-arg]
                except Exception as exc:
                    if self.fallback is None:
                        raise
                    # Sent marked, as `cogolf bot` sends it: recorded as the seat's fallback.
                    value = marked(self.fallback(observation), raised(exc))
            else:
                value = self.policy(observation)
            play = complete_play(value, hole)
        except Exception as exc:  # a policy is user code; any failure is that seat's host_error
            item = Inbound(
                self.slot,
                rejected=Rejected("host_error", f"policy raised {type(exc).__name__}: {exc}"),
            )
        else:
            text = encode_play(play)
            item = (
                Inbound(self.slot, rejected=text)
                if isinstance(text, Rejected)
                else Inbound(self.slot, raw=text)
            )
        self._deliver(item)

    def _deliver(self, item: Inbound) -> None:
        loop, inbox = self._loop, self._inbox
        if loop is None or inbox is None or loop.is_closed():
            return
        # The loop may close while the policy was thinking; then nobody is waiting.
        with contextlib.suppress(RuntimeError):
            loop.call_soon_threadsafe(inbox.put_nowait, item)

    async def close(self) -> None:
        return None
