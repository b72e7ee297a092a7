"""The bot runtime behind `cogolf bot`: connect, answer every observation, reconnect.

A bot must never be the reason its seat is played by the server's fallback, so
the runtime keeps its own deadline: a policy that raises, hangs past the deadline
or returns something the server would refuse is replaced, for that hole, by the
literalist's play (or, for a spec the local deck does not know, a minimal play),
sent marked as the seat's own fallback with the cause (`bots.substitute`), so the
match records and counts it as a fallback. The bot's log says why at once.

Golf observations (`game: "golf"`) go to the same policy, which returns
`{"source": ...}`. Golf's fallback is "no submission", so when the policy fails
the runtime passes the hole at once (`source: null`, marked), which the server
scores exactly like a missed hole without waiting out the deadline and the retry.
"""

from __future__ import annotations

import asyncio
import json
import socket
import sys
import threading
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog
import websockets
from websockets.exceptions import ConnectionClosed, InvalidHandshake, InvalidStatus

from cogolf.bots.policy import Policy, complete_play
from cogolf.bots.scripted import own_fallback
from cogolf.bots.substitute import Why, invalid, marked, raised, too_slow
from cogolf.deck import DEFAULT_DECK, DeckError, PublicDeck, load_public
from cogolf.engine.intake import Accepted, Rejected, accept, encode_play

log = structlog.get_logger("cogolf.bot")

SAFETY_MARGIN = 0.5  # seconds kept in hand before the server's deadline
FATAL_STATUSES = {403, 404, 409, 410}
FIRST_WAIT = 5.0  # seconds a seat never reached is tried for (a server still starting)


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


def url_problem(url: str) -> str:
    """Why `url` cannot be a seat URL, or ''."""
    parts = urlsplit(url)
    if parts.scheme in ("http", "https"):
        return (
            f"seat URLs start with ws:// (or wss://), not {parts.scheme}://: use the seat "
            "URL the server gave (`seats[].url` of POST /matches, or what `cogolf serve "
            "--single` printed)"
        )
    if parts.scheme not in ("ws", "wss") or not parts.hostname:
        return (
            f"{url[:200]!r} is not a seat URL: expected "
            "ws://HOST:PORT/matches/MATCH_ID/player?slot=N&token=TOKEN"
        )
    try:
        parts.port  # noqa: B018 - raises for a port that is not a number
    except ValueError:
        return f"{url[:200]!r}: the port is not a number"
    return ""


def unreachable(url: str, error: BaseException | None, connected: bool, waited: float) -> str:
    """One line: where the bot tried, for how long, and the likely cause."""
    parts = urlsplit(url)
    where = f"{parts.hostname}:{parts.port or (443 if parts.scheme == 'wss' else 80)}"
    head = (
        f"the connection to {where} was lost and not regained in {waited:.0f} s"
        if connected
        else f"cannot reach a Cogolf server at {where} (tried for {waited:.0f} s)"
    )
    if isinstance(error, socket.gaierror):
        cause = f"the host name {parts.hostname!r} does not resolve"
    elif isinstance(error, ConnectionRefusedError):
        cause = "nothing listens there (connection refused): is the server running, on that port?"
    elif isinstance(error, TimeoutError):
        cause = "no answer within 10 s: a firewall, or the wrong address?"
    elif isinstance(error, InvalidStatus):
        cause = (
            f"it answered HTTP {error.response.status_code}, not a seat: is this the server's "
            "port, and the URL the one it gave?"
        )
    elif isinstance(error, InvalidHandshake):
        cause = "it answered, but not as a websocket server: is this the server's port?"
    elif error is not None:
        cause = f"{type(error).__name__}: {error}"[:200]
    else:
        cause = "no reason known"
    return f"{head}: {cause}"


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
        self.fallbacks = 0  # holes this seat sent its own (marked) fallback

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
            why = too_slow(budget)
        elif status == "ok":
            text = encode_play(complete_play(value, hole))
            verdict = accept(text, hole) if isinstance(text, str) else text
            if isinstance(verdict, Accepted) and isinstance(text, str):
                if verdict.fallback_cause is None:
                    return text
                # The policy marked its own play: it is sent as the policy said.
                self._said_why(hole, Why(verdict.fallback_cause, verdict.fallback_detail))
                return text
            why = invalid(verdict.message if isinstance(verdict, Rejected) else "not a play")
        else:
            why = raised(value)
        self._said_why(hole, why)
        text = encode_play(marked(complete_play(self._fallback(observation), hole), why))
        assert isinstance(text, str)
        return text

    async def _think_golf(self, observation: dict[str, Any], hole: int, budget: float) -> str:
        # Imported here: a Cogolf bot process never pays for the golf game's modules.
        from cogolf.games.golf.solo import accept_submission, as_submission

        status, value = await self._ask(observation, budget)
        if status == "ok":
            text = encode_play(complete_play(as_submission(value), hole))
            verdict = accept_submission(text, hole) if isinstance(text, str) else text
            if not isinstance(verdict, Rejected) and isinstance(text, str):
                if verdict.fallback_cause is not None:
                    self._said_why(hole, Why(verdict.fallback_cause, verdict.fallback_detail))
                return text
            why = invalid(verdict.message)
        elif status == "timeout":
            why = too_slow(budget)
        else:
            why = raised(value)
        self._said_why(hole, why)
        return json.dumps(marked({"type": "submission", "hole": hole, "source": None}, why))

    def _said_why(self, hole: int, why: Why) -> None:
        """The bot's own log names every fallback at once, with what to fix."""
        self.fallbacks += 1
        self.log.warning("own_fallback", hole=hole, cause=why.cause, why=why.detail)

    async def run(self, *, give_up_after: float = 120.0, first_wait: float = FIRST_WAIT) -> int:
        """Play until `done`; returns a process exit code.

        A seat never reached gives up after `first_wait` seconds with one line naming the
        address and the likely cause; once connected, a lost connection is retried for
        `give_up_after` seconds, logged once per outage rather than once per try."""
        problem = url_problem(self.url)
        if problem:
            print(f"cogolf bot: {problem}", file=sys.stderr, flush=True)
            return 2
        backoff = 0.1
        loop = asyncio.get_running_loop()
        lost_at: float | None = None
        connected_once = False
        last_error: BaseException | None = None
        while True:
            try:
                async with websockets.connect(self.url, max_size=None, open_timeout=10) as ws:
                    if lost_at is not None and connected_once:
                        self.log.info("reconnected", after=round(loop.time() - lost_at, 1))
                    lost_at, backoff, connected_once = None, 0.1, True
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
                last_error = exc
            except (OSError, ConnectionClosed, TimeoutError, InvalidHandshake) as exc:
                if lost_at is None:  # once per outage, not once per try; before the first
                    # connection only the one line below says anything
                    (self.log.info if connected_once else self.log.debug)(
                        "connection_lost", error=type(exc).__name__
                    )
                last_error = exc
            now = loop.time()
            lost_at = lost_at if lost_at is not None else now
            budget = give_up_after if connected_once else first_wait
            if now - lost_at > budget:
                why = unreachable(self.url, last_error, connected_once, budget)
                self.log.debug("gave_up", seconds=budget)
                print(f"cogolf bot: {why}", file=sys.stderr, flush=True)
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
