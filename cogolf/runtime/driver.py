"""The match driver: carries out the engine's effects with real sends, timers and sandbox runs.

It owns the clock and the journal. Every hole resolves for both seats; whatever
goes wrong (a sandbox that will not start, a wall budget that runs out, a bug),
the replay is closed with an `episode_end` and a result line, so no exception
path loses the resolved holes.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Awaitable, Callable, Sequence

import msgspec
import structlog

from cogolf import messages as m
from cogolf.bots.policy import complete_play
from cogolf.bots.scripted import baseline_play
from cogolf.deck import Deck
from cogolf.engine import collect
from cogolf.engine.intake import Accepted, accept, encode_play
from cogolf.engine.match import Match, SeatPlay, build_resolved, seat_play
from cogolf.replay import ReplayWriter
from cogolf.runtime.inbox import FairInbox, next_within
from cogolf.runtime.resolve import HarnessFault, resolve_hole
from cogolf.runtime.seats import Inbound, Seat
from cogolf.sandbox.api import Limits, Sandbox

log = structlog.get_logger("cogolf.match")


class MatchDeadline(Exception):
    """The match's wall budget ran out."""


def fallback_play(deck: Deck, key: str, hole: int) -> Accepted:
    """The literalist's play for this spec, through the same intake as any seat's."""
    text = encode_play(complete_play(baseline_play(deck.public, key, "literalist"), hole))
    result = accept(text, hole) if isinstance(text, str) else text
    if not isinstance(result, Accepted):
        raise HarnessFault(f"the fallback play for {key} is not acceptable: {result.message}")
    return result


class MatchDriver:
    def __init__(
        self,
        match: Match,
        deck: Deck,
        seats: Sequence[Seat],
        sandbox: Sandbox,
        writer: ReplayWriter,
        *,
        limits: Limits,
        clock: Callable[[], float] = time.monotonic,
        wall: Callable[[], float] = time.time,
        on_event: Callable[[m.ReplayRecord], None] | None = None,
    ) -> None:
        self.match = match
        self.deck = deck
        self.seats = list(seats)
        self.sandbox = sandbox
        self.writer = writer
        self.limits = limits
        self.clock = clock
        self.wall = wall
        self.on_event = on_event
        self.inbox = FairInbox()  # seats served in turn, so one cannot starve the other
        self.collector: collect.HoleCollector | None = None
        self._observed_epoch = [-1, -1]  # the connection epoch each seat last got an observation in
        self._observed_at: list[float | None] = [None, None]
        self.reply_latencies: list[float] = []  # observation sent -> reply received, seconds
        self.log = log.bind(match_id=match.match_id)
        self._started = 0.0

    def emit(self, record: m.ReplayRecord) -> None:
        self.writer.write(record)
        if self.on_event is not None:
            self.on_event(record)

    async def run(self, prepare: Callable[[], Awaitable[None]] | None = None) -> m.MatchResult:
        """Play every unresolved hole. `prepare` (e.g. starting the sandbox) runs inside the
        same protection, so a failure there still ends the match with full artifacts."""
        self._started = self.clock()
        for seat in self.seats:
            seat.attach(self.inbox)
        reason, detail = "complete", ""
        try:
            if prepare is not None:
                await prepare()
            while not self.match.finished:
                await self._play_hole()
        except MatchDeadline:
            reason, detail = "deadline", "the match wall budget ran out"
        except HarnessFault as exc:
            reason, detail = "harness_fault", str(exc)
            self.log.error("harness_fault", detail=detail)
        except Exception as exc:  # a bug must still leave complete artifacts
            reason, detail = "harness_fault", f"{type(exc).__name__}: {exc}"
            self.log.exception("harness_fault")
        return await self._finish(reason, detail)

    async def fail(self, reason: str, detail: str) -> m.MatchResult:
        """End the match now, without playing, keeping every hole resolved so far."""
        self._started = self.clock()
        return await self._finish(reason, detail)

    async def _finish(self, reason: str, detail: str) -> m.MatchResult:
        self.emit(
            m.EpisodeEnd(reason=reason, holes_played=len(self.match.resolved), detail=detail)  # type: ignore[arg-type]
        )
        result = self.match.result(
            reason, self.clock() - self._started, self.deck.version, self.deck.digest
        )
        self.emit(result)
        self.writer.sync()
        for seat in self.seats:
            try:
                await seat.send(m.Done(result))
                await seat.close()
            except Exception:  # a seat that is gone cannot spoil the result
                self.log.warning("seat_close_failed", slot=seat.slot)
        self.log.info("match_end", reason=reason, scores=result.scores)
        return result

    def _budget_left(self) -> float:
        return self.match.config.match_deadline_seconds - (self.clock() - self._started)

    async def _play_hole(self) -> None:
        match = self.match
        hole = match.next_hole
        key = match.keys[hole - 1]
        hlog = self.log.bind(hole=hole, spec=key)
        if self._budget_left() <= 0:
            raise MatchDeadline
        self.emit(m.HoleStart(hole=hole, spec_key=key, at=self.wall()))
        cfg = match.config
        collector = collect.HoleCollector(
            hole,
            self.clock(),
            cfg.hole_deadline_seconds,
            cfg.retry_deadline_seconds,
            (self.seats[0].connected, self.seats[1].connected),
            (not self.seats[0].ever_connected, not self.seats[1].ever_connected),
        )
        self.collector = collector
        await self._apply(collector.open())
        while not collector.done:
            deadline = collector.next_deadline()
            assert deadline is not None
            wait = min(deadline - self.clock(), self._budget_left())
            try:
                item = await next_within(self.inbox.get, wait)
            except TimeoutError:
                if self._budget_left() <= 0:
                    raise MatchDeadline from None
                effects = collector.tick(self.clock())
            else:
                effects = self._take(collector, item)
            await self._apply(effects)
        self.collector = None
        plays = []
        for slot, seat in enumerate(collector.seats):
            used = seat.attempt if seat.accepted else 0
            if seat.accepted is not None:
                plays.append(seat_play(seat.accepted, used, tuple(seat.errors), seat.wrong_hole))
            else:
                hlog.info("fallback", slot=slot, cause=seat.fallback_cause)
                plays.append(
                    SeatPlay(
                        fallback_play(self.deck, key, hole),
                        "fallback",
                        seat.fallback_cause,
                        seat.attempt,
                        tuple(seat.errors),
                        seat.wrong_hole,
                    )
                )
        outcome = await resolve_hole(
            self.sandbox,
            match.specs[key],
            self.deck.hidden[key],
            [p.accepted for p in plays],
            self.limits,
            match.config.hash_seed,
        )
        resolved = build_resolved(
            hole,
            key,
            (plays[0], plays[1]),
            outcome,
            match.scores,
            self.deck.hidden[key].ambiguity,
            self.wall(),
        )
        for record in resolved.records():
            self.emit(record)
        match.add(resolved)
        hlog.info("hole_resolved", score=list(outcome.score), cumulative=list(match.scores))

    def _take(self, collector: collect.HoleCollector, item: Inbound) -> list[collect.Effect]:
        now = self.clock()
        if item.connected is not None:
            collector.set_connected(item.slot, item.connected)
            if item.connected and self._observed_epoch[item.slot] != self.seats[item.slot].epoch:
                pending = collector.pending(item.slot, now)
                return [pending] if pending else []
            return []
        if item.rejected is not None:
            return collector.reject(item.slot, item.rejected, now)
        assert item.raw is not None
        sent = self._observed_at[item.slot]
        if sent is not None:
            self.reply_latencies.append(now - sent)
            self._observed_at[item.slot] = None
        return collector.receive(item.slot, item.raw, now)

    async def _apply(self, effects: list[collect.Effect]) -> None:
        observations = []
        for effect in effects:
            seat = self.seats[effect.slot]
            if isinstance(effect, collect.Observe):
                obs = self.match.observation(effect.slot, effect.retry, effect.deadline_seconds)
                self._observed_epoch[effect.slot] = seat.epoch
                observations.append(self._safe_send(seat, obs))
            elif isinstance(effect, collect.Acknowledge):
                a = effect.accepted
                await self._safe_send(
                    seat,
                    m.Ack(
                        hole=a.hole,
                        dropped_tests=a.dropped_tests,
                        truncated_fields=list(a.truncated_fields),
                    ),
                )
            elif isinstance(effect, collect.Refuse):
                r = effect.rejected
                await self._safe_send(
                    seat,
                    m.Error(
                        hole=self.match.next_hole,
                        cause=r.cause,
                        message=r.message,
                        retry=effect.retry,
                    ),
                )
            elif isinstance(effect, collect.PlayFallback):
                self.log.info("fallback_due", slot=effect.slot, cause=effect.cause)
        # Both seats' observations go out together, before either reply is awaited.
        if observations:
            await asyncio.gather(*observations)
            sent_at = self.clock()
            for effect in effects:
                if isinstance(effect, collect.Observe):
                    self._observed_at[effect.slot] = sent_at

    async def _safe_send(self, seat: Seat, message: msgspec.Struct) -> None:
        try:
            await seat.send(message)
        except Exception as exc:  # a broken connection shows up as a missed deadline
            self.log.warning("send_failed", slot=seat.slot, error=type(exc).__name__)

    def pending_observation(self, slot: int) -> m.Observation | None:
        """For a seat that reconnects: the open observation with the time that remains."""
        if self.collector is None:
            return None
        pending = self.collector.pending(slot, self.clock())
        if pending is None:
            return None
        return self.match.observation(slot, pending.retry, pending.deadline_seconds)
