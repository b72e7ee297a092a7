"""Both seats of a live Cogolf match, played from the test one hole at a time, so a
test decides when each hole resolves (the browser sees the match move hole by hole)."""

from __future__ import annotations

import json
from typing import Any

from websockets.sync.client import ClientConnection, connect

from cogolf.bots.scripted import baseline_play
from cogolf.deck import load

DECK = load()


class SteppedSeats:
    def __init__(self, urls: list[str], policies: tuple[str, str] = ("literalist", "pedant")):
        self.policies = policies
        self.conns: list[ClientConnection] = [connect(u, open_timeout=30) for u in urls]
        self.pending: list[dict[str, Any] | None] = [self._next(c) for c in self.conns]
        self.done: dict[str, Any] | None = None

    def _next(self, conn: ClientConnection) -> dict[str, Any]:
        """The next observation or `done` (welcome and acks skipped)."""
        while True:
            msg = json.loads(conn.recv(timeout=60))
            if msg["type"] in ("observation", "done"):
                return msg

    def step(self, plays: list[dict[str, Any] | None] | None = None) -> None:
        """Both seats answer the hole they were shown (`plays` overrides a seat's play),
        then wait until the next hole (or the end) is offered."""
        for slot, (conn, msg) in enumerate(zip(self.conns, self.pending, strict=True)):
            assert msg is not None and msg["type"] == "observation", msg
            key = msg["observation"]["spec"]["key"]
            play = (plays or [None, None])[slot] or baseline_play(
                DECK.public, key, self.policies[slot]
            )
            conn.send(json.dumps({"type": "submission", "hole": msg["hole"], **play}))
        self.pending = [self._next(c) for c in self.conns]
        if self.pending[0] is not None and self.pending[0]["type"] == "done":
            self.done = self.pending[0]

    def close(self) -> None:
        for c in self.conns:
            c.close()
