"""One league match as one job: everything needed to play it, as plain data.

A job is self-contained and picklable so that any executor (a local task, a Ray
worker on another machine) can play it without the night file, and so that a
replay can be checked against the job that should have produced it.
"""

from __future__ import annotations

from dataclasses import dataclass

from cogolf.engine.match import MatchConfig


@dataclass(frozen=True)
class Seat:
    name: str
    policy: str | None
    command: tuple[str, ...] | None = None
    workdir: str = ""  # a command's working folder, the files it may read
    env: tuple[tuple[str, str], ...] = ()  # added to the bot's scrubbed environment


@dataclass(frozen=True)
class MatchJob:
    match_id: str
    night: str
    round: int  # 1-based; the mirror leg follows the first
    seats: tuple[Seat, Seat]
    seed: int
    holes: int
    hole_deadline: float
    retry_deadline: float
    match_deadline: float
    deck: str  # pack directories, as paths valid where the job runs
    references: str
    deck_digest: str  # the pack the night was scheduled with; a replay must match it
    sandbox: str = "fork"
    accept_weak_sandbox: bool = False

    @property
    def names(self) -> tuple[str, str]:
        return (self.seats[0].name, self.seats[1].name)

    @property
    def replay_name(self) -> str:
        return f"{self.match_id}.ndjson"

    def config(self) -> MatchConfig:
        return MatchConfig(
            seed=self.seed,
            holes=self.holes,
            hole_deadline_seconds=self.hole_deadline,
            retry_deadline_seconds=self.retry_deadline,
            match_deadline_seconds=self.match_deadline,
            names=self.names,
        )
