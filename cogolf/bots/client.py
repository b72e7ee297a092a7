"""The bot runtime behind `cogolf bot`: connect, answer every observation, reconnect.

A bot must never be the reason its seat is played by the server's fallback, so
the runtime keeps its own deadline: a policy that raises, hangs past the deadline
or returns something the server would refuse is replaced, for that hole, by the
literalist's play (or, for a spec the local deck does not know, a minimal play).

Golf observations (`game: "golf"`) go to the same policy, which returns
`{"source": ...}`. Golf's fallback is "no submission", so when the policy fails
the runtime passes the hole at once (`source: null`), which the server scores
exactly like a missed hole without waiting out the deadline and the retry.
"""

from __future__ import annotations

import asyncio
import json
import sys
import threading
from pathlib import Path
from typing import Any

import structlog
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from cogolf.bots.policy import Policy, complete_play
from cogolf.bots.scripted import own_fallback
from cogolf.deck import DEFAULT_DECK, DeckError, PublicDeck, load_public
from cogolf.engine.intake import Accepted, Rejected, accept, encode_play

log = structlog.get_logger("cogolf.bot")

SAFETY_MARGIN = 0.5  # seconds kept in hand before the server's deadline
FATAL_STATUSES = {403, 404, 409, 410}


def refusal(status: int, body: bytes | None) -> str:
    """Why the server refused a seat: its own message, and what to do about it."""
    try:
        said = json.loads(body or b"{}").get("error", "")
    except (ValueError, AttributeError):
        said = ""
    said = str(said)[:200] or "no reason given"
    if status == 410:
        return (
            f"{said}. A seat must connect within the server's connect timeout "
            "(30 s by default, counted from the match's creation); a seat absent then "
            "is played by the fallback, and once the match has ended no seat can join"
        )
    if status == 403:
        return f"{said} (check the match id, slot and token in the URL)"
    return said


class BotRuntime:
    def __init__(
        self,
        url: str,
        policy: Policy,
        *,
        deck_dir: Path | None = None,
        transcripts: Path | None = None,
    ) -> None:
        self.url = url
        self.policy = policy
        # An LLM player keeps its transcript here, named by the welcome's match id and slot.
        self.transcripts = transcripts
        try:
            self.deck: PublicDeck | None = load_public(deck_dir or DEFAULT_DECK)
        except DeckError:
            self.deck = None
        self.log = log
        self.welcome: dict[str, Any] = {}

    def _fallback(self, observation: dict[str, Any]) -> dict[str, Any]:
        return own_fallback(self.deck, observation)

    async def _ask(self, observation: dict[str, Any], budget: float) -> tuple[str, Any]:
        """Run the policy on a thread: ("ok", value), ("raised", exc) or ("timeout", None)."""
        loop = asyncio.get_running_loop()
        done: asyncio.Future[Any] = loop.create_future()

        def work() -> None:
            try:
                if getattr(self.policy, "wants_budget", False):  # it keeps the deadline too
                    result: Any = ("ok", self.policy(observation, budget=budget))  # type: ignore[call-arg]
                else:
                    result = ("ok", self.policy(observation))
            except Exception as exc:  # user code
                result = ("raised", exc)
            loop.call_soon_threadsafe(lambda: done.done() or done.set_result(result))

        threading.Thread(target=work, daemon=True, name="policy").start()
        try:
            return await asyncio.wait_for(done, timeout=max(0.05, budget))
        except TimeoutError:
            return "timeout", None

    async def _think(self, observation: dict[str, Any], hole: int, budget: float) -> str:
        status, value = await self._ask(observation, budget)
        if status == "timeout":
            why = "policy missed the deadline"
        else:
            if status == "ok":
                text = encode_play(complete_play(value, hole))
                if isinstance(text, str) and isinstance(accept(text, hole), Accepted):
                    return text
                why = "policy returned a play the server would refuse"
            else:
                why = f"policy raised {type(value).__name__}: {value}"
        self.log.warning("policy_fallback", hole=hole, why=why)
        text = encode_play(complete_play(self._fallback(observation), hole))
        assert isinstance(text, str)
        return text

    async def _think_golf(self, observation: dict[str, Any], hole: int, budget: float) -> str:
        # Imported here: a Cogolf bot process never pays for the golf game's modules.
        from cogolf.games.golf.solo import accept_submission, as_submission

        status, value = await self._ask(observation, budget)
        if status == "ok":
            text = encode_play(complete_play(as_submission(value), hole))
            if isinstance(text, str):
                verdict = accept_submission(text, hole)
                if not isinstance(verdict, Rejected):
                    return text
                why = f"policy returned a submission the server would refuse: {verdict.message}"
            else:
                why = f"policy returned a submission the server would refuse: {text.message}"
        elif status == "timeout":
            why = "policy missed the deadline"
        else:
            why = f"policy raised {type(value).__name__}: {value}"
        self.log.warning("policy_pass", hole=hole, why=why)
        return json.dumps({"type": "submission", "hole": hole, "source": None})

    async def run(self, *, give_up_after: float = 120.0) -> int:
        """Play until `done`; returns a process exit code."""
        backoff = 0.1
        loop = asyncio.get_running_loop()
        lost_at: float | None = None
        while True:
            try:
                async with websockets.connect(self.url, max_size=None, open_timeout=10) as ws:
                    lost_at, backoff = None, 0.1
                    async for frame in ws:
                        if await self._handle(ws, frame):
                            return 0
                    # the server closed the connection without `done`: try again
            except InvalidStatus as exc:
                status = exc.response.status_code
                if status in FATAL_STATUSES:
                    reason = refusal(status, exc.response.body)
                    self.log.error("refused", status=status, reason=reason)
                    print(
                        f"cogolf bot: the server refused the seat ({status}): {reason}",
                        file=sys.stderr,
                        flush=True,
                    )
                    return 2
            except (OSError, ConnectionClosed, TimeoutError) as exc:
                self.log.info("connection_lost", error=type(exc).__name__)
            now = loop.time()
            lost_at = lost_at if lost_at is not None else now
            if now - lost_at > give_up_after:
                self.log.error("gave_up", seconds=give_up_after)
                return 1
            await asyncio.sleep(backoff)
            backoff = min(backoff * 2, 2.0)

    async def _handle(self, ws: Any, frame: str | bytes) -> bool:
        try:
            msg = json.loads(frame)
        except ValueError:
            self.log.warning("bad_frame")
            return False
        kind = msg.get("type") if isinstance(msg, dict) else None
        if kind == "welcome":
            opener = getattr(self.policy, "open_transcript", None)
            if self.transcripts is not None and opener is not None and not self.welcome:
                opener(self.transcripts, str(msg.get("match_id", "match")), int(msg.get("slot", 0)))
            self.welcome = msg
            self.log = log.bind(slot=msg.get("slot"))
        elif kind == "observation":
            hole = msg.get("hole", 0)
            budget = float(msg.get("deadline_seconds", 1.0)) - SAFETY_MARGIN
            observation = msg.get("observation", {})
            if isinstance(observation, dict) and observation.get("game") == "golf":
                text = await self._think_golf(observation, hole, budget)
            else:
                text = await self._think(observation, hole, budget)
            await ws.send(text)
        elif kind == "error":
            self.log.warning("server_error", cause=msg.get("cause"), message=msg.get("message"))
        elif kind == "done":
            result = msg.get("result", {})
            self.log.info(
                "done",
                scores=result.get("scores", [result.get("score")]),
                reason=result.get("reason"),
            )
            return True
        return False
