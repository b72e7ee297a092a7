"""The golf match driver: one seat, eighteen holes, real sends, timers and runner calls.

Per hole the engine's `HoleCollector` (with one seat and the golf intake) decides
observations, acks, errors, the retry and the fallback; this driver carries the
effects out, runs the chosen file on the hole's scoring set, and journals every
step. Whatever goes wrong, the journal ends with an `episode_end` and a result
line, and the seat gets `done`.
"""

from __future__ import annotations

import asyncio
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import msgspec
import structlog

from cogolf import messages as m
from cogolf.engine import collect
from cogolf.games.golf import play
from cogolf.games.golf.courses import Course
from cogolf.games.golf.holes import HoleSet
from cogolf.games.golf.results import new_result, write_result
from cogolf.games.golf.runners.base import RunLimits, Runner
from cogolf.games.golf.scoring import HoleResult
from cogolf.games.golf.solo import AcceptedSource, accept_submission, observation
from cogolf.games.golf.wire import (
    GolfConfig,
    GolfDone,
    GolfEpisodeEnd,
    GolfHoleScore,
    GolfHoleStart,
    GolfMatchResult,
    GolfObservation,
    GolfReplayHeader,
    GolfSubmissionRecord,
    PublicTest,
)
from cogolf.replay import ReplayWriter
from cogolf.runtime.inbox import next_within
from cogolf.runtime.seats import Inbound, Seat

log = structlog.get_logger("cogolf.golf")


def golf_header(match_id: str, config: GolfConfig, holes: HoleSet) -> GolfReplayHeader:
    return GolfReplayHeader(
        match_id=match_id,
        config=config,
        holes_version=holes.version,
        holes=[h.key for h in holes.holes],
        started_at=time.time(),
    )


@dataclass
class GolfDriver:
    match_id: str
    config: GolfConfig
    course: Course
    holes: HoleSet
    runner: Runner
    limits: RunLimits
    seat: Seat
    writer: ReplayWriter
    results_dir: Path | None  # where the course result document goes; None: not written
    results: list[HoleResult] = field(default_factory=list)  # resolved holes (kept on resume)
    clock: Callable[[], float] = time.monotonic
    wall: Callable[[], float] = time.time
    on_event: Callable[[msgspec.Struct], None] | None = None

    def __post_init__(self) -> None:
        self.inbox: asyncio.Queue[Inbound] = asyncio.Queue()
        self.collector: collect.HoleCollector | None = None
        self._observed_epoch = -1
        self.log = log.bind(match_id=self.match_id, slot=0)

    @property
    def score(self) -> float:
        return sum(r.score for r in self.results)

    def emit(self, record: msgspec.Struct) -> None:
        self.writer.write(record)  # type: ignore[arg-type]
        if self.on_event is not None:
            self.on_event(record)

    async def run(self) -> GolfMatchResult:
        started = self.clock()
        self.seat.attach(self.inbox)
        reason, detail = "complete", ""
        try:
            while len(self.results) < len(self.holes.holes):
                await self._play_hole(len(self.results) + 1)
        except Exception as exc:  # a bug or a broken runner still leaves complete artifacts
            reason, detail = "harness_fault", f"{type(exc).__name__}: {exc}"
            self.log.exception("harness_fault")
        return await self.finish(reason, detail, started)

    async def finish(
        self, reason: str, detail: str, started: float | None = None
    ) -> GolfMatchResult:
        """End the match now, keeping every resolved hole; the document only when complete."""
        self.emit(GolfEpisodeEnd(reason=reason, holes_played=len(self.results), detail=detail))
        doc, path = None, None
        if reason == "complete":
            doc = new_result(self.config.model, self.course.name, self.holes.version, self.results)
            if self.results_dir is not None:
                path = write_result(self.results_dir, doc)
        result = GolfMatchResult(
            match_id=self.match_id,
            reason=reason,
            course=self.course.name,
            model=self.config.model,
            holes_played=len(self.results),
            score=round(self.score, 2),
            document=doc,
            result_file=str(path) if path else None,
            wall_clock_seconds=self.clock() - (started if started is not None else self.clock()),
        )
        self.emit(result)
        self.writer.sync()
        try:
            await self.seat.send(GolfDone(result))
            await self.seat.close()
        except Exception:  # a seat that is gone cannot spoil the result
            self.log.warning("seat_close_failed")
        self.log.info("golf_match_end", reason=reason, score=result.score)
        return result

    async def _play_hole(self, number: int) -> None:
        hole = self.holes.holes[number - 1]
        hlog = self.log.bind(hole=number, key=hole.key)
        self.emit(GolfHoleStart(
            hole=number, key=hole.key, at=self.wall(), title=hole.title,
            description=hole.description, signature=self.course.signature(hole),
            public_tests=[PublicTest(list(t.args), t.expect) for t in hole.public],
        ))  # fmt: skip
        collector = collect.HoleCollector(
            number,
            self.clock(),
            self.config.hole_deadline_seconds,
            self.config.retry_deadline_seconds,
            (self.seat.connected,),
            (not self.seat.ever_connected,),
            intake=accept_submission,
        )
        self.collector = collector
        await self._apply(collector.open())
        while not collector.done:
            deadline = collector.next_deadline()
            assert deadline is not None
            try:
                item = await next_within(self.inbox.get, deadline - self.clock())
            except TimeoutError:
                effects = collector.tick(self.clock())
            else:
                effects = self._take(collector, item)
            await self._apply(effects)
        self.collector = None
        attempts = collector.seats[0]
        accepted = attempts.accepted
        source = accepted.source if isinstance(accepted, AcceptedSource) else None
        if source is None:
            result = play.judge_attempts(hole, [], [])
        else:
            batch = await play.run_attempt(self.runner, hole, source)
            result = play.judge_attempts(hole, [source], [batch])
        own = accepted.fallback_cause if isinstance(accepted, AcceptedSource) else None
        cause = attempts.fallback_cause if accepted is None else own
        if cause:  # the result says so too: a fallback is never scored as the seat's play
            result = msgspec.structs.replace(result, fallback=cause)
        if accepted is None:
            hlog.info("fallback", cause=attempts.fallback_cause)
        elif own is not None:
            hlog.info("seat_fallback", cause=own)
        self.emit(
            GolfSubmissionRecord(
                hole=number,
                key=hole.key,
                source=source.decode("utf-8") if source is not None else None,
                origin="fallback" if accepted is None else "seat_fallback" if own else "seat",
                fallback_cause=attempts.fallback_cause if accepted is None else own,
                attempts_used=attempts.attempt if accepted is not None else 0,
                errors=list(attempts.errors),
                wrong_hole=attempts.wrong_hole,
                fallback_detail=accepted.fallback_detail if own else "",
            )
        )
        self.results.append(result)
        self.emit(
            GolfHoleScore(
                hole=number, key=hole.key, result=result, total=round(self.score, 2), at=self.wall()
            )
        )
        hlog.info("hole_scored", score=result.score, status=result.status)

    def _take(self, collector: collect.HoleCollector, item: Inbound) -> list[collect.Effect]:
        now = self.clock()
        if item.connected is not None:
            collector.set_connected(0, item.connected)
            if item.connected and self._observed_epoch != self.seat.epoch:
                pending = collector.pending(0, now)
                return [pending] if pending else []
            return []
        if item.rejected is not None:
            return collector.reject(0, item.rejected, now)
        assert item.raw is not None
        return collector.receive(0, item.raw, now)

    def _observation(self, number: int, retry: bool, deadline: float) -> GolfObservation:
        hole = self.holes.holes[number - 1]
        body = observation(
            self.course, hole, number, len(self.holes.holes), self.limits, self.score
        )
        return GolfObservation(number, deadline, retry, body)

    async def _apply(self, effects: list[collect.Effect]) -> None:
        assert self.collector is not None
        number = self.collector.hole
        for effect in effects:
            message: msgspec.Struct | None = None
            if isinstance(effect, collect.Observe):
                self._observed_epoch = self.seat.epoch
                message = self._observation(number, effect.retry, effect.deadline_seconds)
            elif isinstance(effect, collect.Acknowledge):
                message = m.Ack(hole=number)
            elif isinstance(effect, collect.Refuse):
                r = effect.rejected
                message = m.Error(hole=number, cause=r.cause, message=r.message, retry=effect.retry)
            elif isinstance(effect, collect.PlayFallback):
                self.log.info("fallback_due", hole=number, cause=effect.cause)
            if message is not None:
                try:
                    await self.seat.send(message)
                except Exception as exc:  # a broken connection shows up as a missed deadline
                    self.log.warning("send_failed", error=type(exc).__name__)
