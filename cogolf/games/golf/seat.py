"""The in-process golf seat: a policy function plays the one seat without a server.

Used by `cogolf golf play --in-process`. It goes through the same driver,
collector and intake as a websocket seat; only the transport differs (the
policy runs on a daemon thread, so one that hangs just misses its deadline).
"""

from __future__ import annotations

import threading
from typing import Any

import msgspec

from cogolf.bots.policy import Policy
from cogolf.games.golf.solo import as_submission
from cogolf.games.golf.wire import GolfObservation
from cogolf.runtime.seats import InProcessSeat


class GolfInProcessSeat(InProcessSeat):
    def __init__(self, policy: Policy) -> None:
        def submit(observation: dict[str, Any]) -> Any:
            return as_submission(policy(observation))

        super().__init__(0, submit)

    async def send(self, message: msgspec.Struct) -> None:
        if isinstance(message, GolfObservation):
            doc = msgspec.to_builtins(message.observation)
            threading.Thread(
                target=self._think, args=(doc, message.hole), daemon=True, name="golf-seat"
            ).start()
