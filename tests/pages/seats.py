"""Both seats of a live Cogolf match, played from the test one hole at a time, so a
test decides when each hole resolves (the browser sees the match move hole by hole)."""

from __future__ import annotations

import contextlib
import json
from typing import Any

from websockets.sync.client import ClientConnection, connect

from cogolf.bots.scripted import baseline_play
from cogolf.deck import load

DECK = load()


class SteppedSeats:
    def __init__(self, urls: list[str], policies: tuple[str, str] = ("literalist", "pedant")):
        self.policies = policies
        self._stack = contextlib.ExitStack()
        self.conns: list[ClientConnection] = [
            self._stack.enter_context(connect(u, open_timeout=30)) for u in urls
        ]
        self.pending: list[dict[str, Any] | None] = [self._next(c) for c in self.conns]
        self.done: dict[str, Any] | None = None

    def _next(self, conn: ClientConnection) -> dict[str, Any]:
        """The next observation of a new hole, or `done` (welcome, acks, errors and the
        offer of a retry skipped: a seat that sent junk stays silent and gets the fallback)."""
        while True:
            msg = json.loads(conn.recv(timeout=60))
            if msg["type"] == "done" or (msg["type"] == "observation" and not msg["retry"]):
                return msg

    def step(self, plays: list[dict[str, Any] | str | None] | None = None) -> None:
        """Both seats answer the hole they were shown (`plays` overrides a seat's play; a
        string is sent as it is), then wait until the next hole (or the end) is offered."""
        for slot, (conn, msg) in enumerate(zip(self.conns, self.pending, strict=True)):
            assert msg is not None and msg["type"] == "observation", msg
            given = (plays or [None, None])[slot]
            if isinstance(given, str):
                conn.send(given)
                continue
            key = msg["observation"]["spec"]["key"]
            play = given or baseline_play(DECK.public, key, self.policies[slot])
            conn.send(json.dumps({"type": "submission", "hole": msg["hole"], **play}))
        self.pending = [self._next(c) for c in self.conns]
        if self.pending[0] is not None and self.pending[0]["type"] == "done":
            self.done = self.pending[0]

    def play_out(self) -> dict[str, Any]:
        while self.done is None:
            self.step()
        return self.done

    def close(self) -> None:
        self._stack.close()
