"""Collecting both seats' submissions for one hole: deadlines, one retry, fallback.

A pure state machine. The driver feeds it what happened (a message arrived, the
clock moved, a seat connected or dropped) with the current time, and it answers
with effects to carry out (send this observation or reply, play the fallback).
Every hole ends with a final play for both seats: a seat that misses its
deadline, or answers malformed or oversize, gets the same observation again with
`retry`; a seat that fails the retry too is played by the fallback.

The seat count and the intake are parameters: a Cogolf hole has two seats and
the Cogolf intake; a solo golf hole has one seat and the golf intake. Anything
the intake returns that is not a `Rejected` is the accepted submission.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from cogolf.engine.intake import Accepted, Rejected, accept

# Validates one raw message for the open hole: the accepted submission, or why not.
Intake = Callable[[str | bytes, int], Any]


@dataclass(frozen=True)
class Observe:
    slot: int
    retry: bool
    deadline_seconds: float


@dataclass(frozen=True)
class Acknowledge:
    slot: int
    accepted: Accepted | Any  # whatever the collector's intake accepted


@dataclass(frozen=True)
class Refuse:
    slot: int
    rejected: Rejected
    retry: bool  # another attempt will be offered


@dataclass(frozen=True)
class PlayFallback:
    slot: int
    cause: str  # timeout | malformed | oversize | disconnected | host_error


Effect = Observe | Acknowledge | Refuse | PlayFallback


@dataclass
class SeatAttempts:
    attempt: int = 1  # 1, then 2 for the retry
    deadline: float = 0.0
    accepted: Accepted | Any | None = None
    fallback_cause: str | None = None
    errors: list[str] = field(default_factory=list)
    wrong_hole: int = 0
    late: int = 0
    connected: bool = True

    @property
    def final(self) -> bool:
        return self.accepted is not None or self.fallback_cause is not None


class HoleCollector:
    def __init__(
        self,
        hole: int,
        now: float,
        hole_deadline: float,
        retry_deadline: float,
        connected: tuple[bool, ...] = (True, True),
        absent: tuple[bool, ...] | None = None,
        intake: Intake = accept,
    ) -> None:
        """One seat per entry of `connected`. `absent` marks a seat that never connected
        to this match: it is played by the fallback at once rather than after a deadline
        nobody can meet."""
        self.hole = hole
        self.hole_deadline = hole_deadline
        self.retry_deadline = retry_deadline
        self.seats = [SeatAttempts(deadline=now + hole_deadline, connected=c) for c in connected]
        self.absent = absent if absent is not None else (False,) * len(self.seats)
        if len(self.absent) != len(self.seats):
            raise ValueError("absent must have one entry per seat")
        self.intake = intake

    def open(self) -> list[Effect]:
        effects: list[Effect] = []
        for slot in range(len(self.seats)):
            if self.absent[slot]:
                self.seats[slot].fallback_cause = "disconnected"
                self.seats[slot].errors.append("disconnected: the seat never connected")
                effects.append(PlayFallback(slot, "disconnected"))
            else:
                effects.append(Observe(slot, False, self.hole_deadline))
        return effects

    @property
    def done(self) -> bool:
        return all(s.final for s in self.seats)

    def next_deadline(self) -> float | None:
        pending = [s.deadline for s in self.seats if not s.final]
        return min(pending) if pending else None

    def pending(self, slot: int, now: float) -> Observe | None:
        """What to resend to a seat that (re)connects now, with the time that remains."""
        seat = self.seats[slot]
        if seat.final:
            return None
        return Observe(slot, seat.attempt > 1, max(0.0, seat.deadline - now))

    def set_connected(self, slot: int, connected: bool) -> None:
        self.seats[slot].connected = connected

    def receive(self, slot: int, raw: str | bytes, now: float) -> list[Effect]:
        return self._handle(slot, self.intake(raw, self.hole), now)

    def reject(self, slot: int, rejected: Rejected, now: float) -> list[Effect]:
        """A failure found by the transport (a frame over the size cap, a policy that crashed)."""
        return self._handle(slot, rejected, now)

    def _handle(self, slot: int, result: Accepted | Any, now: float) -> list[Effect]:
        seat = self.seats[slot]
        if seat.final:
            seat.late += 1
            why = (
                "a submission was already accepted" if seat.accepted else "the fallback was played"
            )
            if isinstance(result, Rejected):  # still say what was wrong with it
                late = Rejected(result.cause, f"{result.message} (ignored: {why})", result.hole)
            else:
                late = Rejected("late", f"hole {self.hole}: {why}; ignored")
            return [Refuse(slot, late, False)]
        if not isinstance(result, Rejected):
            seat.accepted = result
            return [Acknowledge(slot, result)]
        if result.cause == "wrong_hole":
            seat.wrong_hole += 1
            return [Refuse(slot, result, False)]
        seat.errors.append(f"{result.cause}: {result.message}")
        return self._fail(slot, result.cause, now, refusal=result)

    def tick(self, now: float) -> list[Effect]:
        effects: list[Effect] = []
        for slot, seat in enumerate(self.seats):
            if not seat.final and now >= seat.deadline:
                cause = "timeout" if seat.connected else "disconnected"
                seat.errors.append(f"{cause}: no submission by the deadline")
                # A seat that is not there is not offered a retry it cannot see.
                effects += self._fail(slot, cause, now, retry_allowed=seat.connected)
        return effects

    def _fail(
        self,
        slot: int,
        cause: str,
        now: float,
        *,
        refusal: Rejected | None = None,
        retry_allowed: bool = True,
    ) -> list[Effect]:
        seat = self.seats[slot]
        retry = seat.attempt == 1 and retry_allowed
        effects: list[Effect] = []
        if refusal is not None:
            effects.append(Refuse(slot, refusal, retry))
        if retry:
            seat.attempt = 2
            seat.deadline = now + self.retry_deadline
            effects.append(Observe(slot, True, self.retry_deadline))
        else:
            seat.fallback_cause = cause
            effects.append(PlayFallback(slot, cause))
        return effects
