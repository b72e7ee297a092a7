"""The LLM player: one observation in, one play out, always inside the seat's deadline.

A turn is a short conversation: the prompt, the reply, and at most one re-ask
quoting the exact reason the reply was refused. Provider failures that may pass
(429 with its retry-after, 5xx, timeouts, truncated or refused replies) are
retried with backoff as long as another request still fits before the
deadline, less a margin for the network. When nothing valid can be had in
time the player raises `GiveUp`, and the bot runtime sends its fallback at once
(the literalist's play for Cogolf, a pass for golf) instead of missing the hole.

A provider that cannot be reached at all is not retried for the whole deadline:
a failed connection is tried again at most `CONNECT_RETRIES` times per hole, and
after `BROKEN_AFTER` holes in a row without one usable reply the seat is broken
(`SeatBroken`): every later hole of the match is its fallback at once, without a
request, so a dead provider costs seconds, not the match's deadlines.
"""

from __future__ import annotations

import ipaddress
import threading
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import structlog

from cogolf.llm import prompts
from cogolf.llm.config import LLMConfig
from cogolf.llm.providers import Provider, ProviderError, Reply
from cogolf.llm.redact import Redactor
from cogolf.llm.replies import ReplyError, cogolf_play, golf_source
from cogolf.llm.transcript import Transcript, transcript_path
from cogolf.matchid import MatchIdError, check_match_id

log = structlog.get_logger("cogolf.llm")

NETWORK_MARGIN = 0.25  # seconds kept for sending the play after the last reply
MIN_REQUEST = 0.2  # a request with less time than this is not started
BACKOFF_FIRST, BACKOFF_MAX = 0.1, 4.0
REASKS = 1
DEFAULT_BUDGET = 60.0  # when called without a deadline (e.g. in-process play)
CONNECT_RETRIES = 2  # per hole: a provider that refuses connections is not tried all hole
BROKEN_AFTER = 3  # holes in a row without a usable reply, then the seat is broken


def _loopback(host: str) -> bool:
    try:
        return host == "localhost" or ipaddress.ip_address(host).is_loopback
    except ValueError:
        return False


class GiveUp(RuntimeError):
    """No valid play can be had before the deadline; the runtime plays the fallback,
    marked with this cause (`messages.SEAT_FALLBACK_CAUSES`)."""

    fallback_cause = "llm_no_reply"


class SeatBroken(GiveUp):
    """`BROKEN_AFTER` holes in a row without a usable reply: the seat's fallback from
    now on, at once, for the rest of the match."""

    fallback_cause = "llm_broken"


class LLMPlayer:
    """A policy (`player(observation, budget=...)`) backed by a chat model."""

    wants_budget = True  # the bot runtime passes the seconds left before its own deadline

    def __init__(
        self,
        config: LLMConfig,
        *,
        transcript: Transcript | None = None,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        self.config = config
        self.redact = Redactor(config.api_key())  # raises now, not mid-match, when unset
        self.transcript = transcript
        self.clock = clock
        self._provider: Provider | None = None
        self._lock = threading.Lock()
        self.log = log.bind(provider=config.provider, model=config.model)
        self.failed_in_a_row = 0  # holes without a usable reply, since the last played one
        self.broken: str | None = None  # why the seat is broken, once it is

    def warm(self) -> None:
        """Import the client and build it now, before the first deadline runs."""
        with self._lock:
            if self._provider is None:
                self._provider = Provider(self.config)
                url = urlsplit(self.config.base_url or "")
                if url.scheme == "http" and not _loopback(url.hostname or ""):
                    # Allowed (a provider on the LAN), but the key then crosses it in clear.
                    self.log.warning("llm_plain_http", host=url.hostname)

    def open_transcript(self, directory: Path, match_id: str, slot: int) -> None:
        """Start this seat's transcript; the id comes from the server, so it is checked."""
        try:
            match_id = check_match_id(match_id, "welcome.match_id")
        except MatchIdError:
            match_id = "match"
        self.transcript = Transcript(transcript_path(directory, match_id, slot), self.redact)
        self.transcript.write(
            "start",
            match_id=match_id,
            slot=slot,
            provider=self.config.provider,
            model=self.config.model,
        )

    def __call__(self, observation: dict[str, Any], budget: float | None = None) -> Any:
        start = self.clock()  # the budget runs from the observation, importing included
        self.warm()
        end = start + (DEFAULT_BUDGET if budget is None else budget) - NETWORK_MARGIN
        golf = observation.get("game") == "golf"
        hole = int(observation.get("hole", 0))
        turn = Turn(self, observation, hole, golf, end)
        if self.broken is not None:
            turn.finish("fallback", self.broken, start)
            raise SeatBroken(self.broken)
        try:
            play = turn.run()
        except Exception as exc:
            # Whatever else broke, the runtime gets a GiveUp whose message cannot carry
            # the key or a provider's escapes into its log.
            why = str(exc) if isinstance(exc, GiveUp) else (
                f"{type(exc).__name__}: {self.redact.shown(str(exc))}"
            )
            turn.finish("fallback", why, start)
            raise self._gave_up(why) from None
        self.failed_in_a_row = 0
        turn.finish("played", "", start)
        return play

    def _gave_up(self, why: str) -> GiveUp:
        """This hole's GiveUp; the one that breaks the seat once too many holes failed."""
        self.failed_in_a_row += 1
        if self.failed_in_a_row < BROKEN_AFTER:
            return GiveUp(why)
        self.broken = (
            f"no usable reply on {BROKEN_AFTER} holes in a row (the last: {why}); every later "
            "hole of this match is the seat's fallback, without a request"
        )
        self.log.warning("llm_seat_broken", why=self.broken)
        return SeatBroken(self.broken)

    def cost(self, reply: Reply) -> float | None:
        if reply.cost is not None:
            return reply.cost
        c = self.config
        if c.input_price_per_mtok is None and c.output_price_per_mtok is None:
            return None
        return (
            reply.input_tokens * (c.input_price_per_mtok or 0.0)
            + reply.output_tokens * (c.output_price_per_mtok or 0.0)
        ) / 1e6


class Turn:
    """One hole's conversation and its accounting."""

    def __init__(
        self, player: LLMPlayer, observation: dict[str, Any], hole: int, golf: bool, end: float
    ) -> None:
        self.p, self.hole, self.golf, self.end = player, hole, golf, end
        self.observation = observation
        if golf:
            self.system = prompts.GOLF_SYSTEM
            first = prompts.golf_user(observation)
            self.max_bytes = int(observation.get("rules", {}).get("max_source_bytes", 0) or 0)
        else:
            self.system = prompts.cogolf_system(observation.get("rules", {}))
            first = prompts.cogolf_user(observation)
        self.messages: list[dict[str, str]] = [{"role": "user", "content": first}]
        self.attempts = self.input_tokens = self.output_tokens = 0
        self.cost: float | None = None
        self.log = player.log.bind(hole=hole)

    def _parse(self, text: str) -> Any:
        # A provider that echoes the key must not get it into a play: a source is redacted
        # as the text it is, a play's strings once decoded from the reply's JSON.
        if self.golf:
            return golf_source(self.p.redact(text), self.max_bytes or 1 << 30)
        return cogolf_play(text, self.hole, self.p.redact.value)

    def run(self) -> Any:
        failures, reasks, unreachable = 0, REASKS, 0
        while True:
            left = self.end - self.p.clock()
            if left < MIN_REQUEST:
                raise GiveUp(f"{left:.2f} s left before the deadline: no time for a request")
            reply = self._attempt(min(self.p.config.request_timeout, left))
            if isinstance(reply, ProviderError):
                if not reply.retryable:
                    raise GiveUp(f"provider refused the request: {self.p.redact.shown(str(reply))}")
                unreachable += reply.kind == "connection"
                if unreachable > CONNECT_RETRIES:
                    where = self.p.redact.shown(self.p.config.base_url or "its default URL")
                    raise GiveUp(
                        f"the provider cannot be reached at {where} ({unreachable} tries): "
                        f"{self.p.redact.shown(str(reply))}"
                    )
                failures += 1
                wait = reply.retry_after
                if wait is None:
                    wait = min(BACKOFF_FIRST * 2 ** (failures - 1), BACKOFF_MAX)
                if self.p.clock() + wait + MIN_REQUEST > self.end:
                    raise GiveUp(
                        f"{reply.kind}: waiting {wait:.2f} s to retry would miss the deadline"
                    )
                time.sleep(wait)
                continue
            try:
                return self._parse(reply.text)
            except ReplyError as exc:
                shown = self.p.redact.shown(str(exc))
                self.log.info("llm_reply_refused", attempt=self.attempts, error=shown)
                if reasks == 0:
                    raise GiveUp(f"the reply was refused: {shown}") from None
                reasks -= 1
                self.messages += [
                    {"role": "assistant", "content": reply.text},
                    {
                        "role": "user",
                        "content": f"That reply cannot be played: {exc}\n"
                        "Reply again with the corrected play only.",
                    },
                ]

    def _attempt(self, timeout: float) -> Reply | ProviderError:
        self.attempts += 1
        provider = self.p._provider
        assert provider is not None
        t0 = self.p.clock()
        try:
            reply: Reply | ProviderError = provider.complete(self.system, self.messages, timeout)
        except ProviderError as exc:
            reply = exc
        latency = round((self.p.clock() - t0) * 1000, 1)
        got = reply.reply if isinstance(reply, ProviderError) else reply
        cost = self.p.cost(got) if got is not None else None
        if got is not None:
            self.input_tokens += got.input_tokens
            self.output_tokens += got.output_tokens
            if cost is not None:
                self.cost = (self.cost or 0.0) + cost
        error = None
        if isinstance(reply, ProviderError):
            error = {
                "kind": reply.kind,
                "status": reply.status,
                "retry_after": reply.retry_after,
                "message": self.p.redact.shown(str(reply)),
            }
        fields = {
            "attempt": self.attempts,
            "latency_ms": latency,
            "timeout_s": round(timeout, 3),
            "input_tokens": got.input_tokens if got else 0,
            "output_tokens": got.output_tokens if got else 0,
            "cost": cost,
            "finish": self.p.redact.shown(got.finish) if got else None,  # the provider's text
            "error": error,
        }
        # info even when it failed: the turn's outcome is what a reader acts on (the bot's
        # `own_fallback`, `cogolf play`'s note), and the transcript keeps every attempt
        self.log.info("llm_attempt", **fields)
        if self.p.transcript is not None:
            self.p.transcript.write(
                "attempt",
                hole=self.hole,
                system=self.system if self.attempts == 1 else None,
                messages=self.messages,
                reply=got.text if got else None,
                **fields,
            )
        return reply

    def finish(self, outcome: str, why: str, start: float) -> None:
        seconds = round(self.p.clock() - start, 3)
        fields = {
            "outcome": outcome,
            "why": why,
            "attempts": self.attempts,
            "input_tokens": self.input_tokens,
            "output_tokens": self.output_tokens,
            "cost": self.cost,
            "seconds": seconds,
        }
        self.log.info("llm_turn", **fields)
        if self.p.transcript is not None:
            self.p.transcript.write("turn", hole=self.hole, golf=self.golf, **fields)


def player_from_ref(ref: str) -> LLMPlayer:
    """The player of a policy reference `llm:CONFIG.toml` (or a night's inline `llm:{...}`)."""
    from cogolf.llm.entrant import config_of

    return LLMPlayer(config_of(ref))
