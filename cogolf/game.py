"""The one interface every game offers the platform.

A game is one folder under `cogolf/games/` and one line in `cogolf.games.registry`.
The server, the league and the commands reach a game only through the objects
described here, so hosting, journaling, spectating and tabulating are written
once for every game.

Two kinds of game share the interface:

- a *live* game (Cogolf with two seats, golf with one) is played over the
  websocket protocol: it declares its name, seats and wire types (the JSON Schema
  `cogolf schema` prints), creates a hosted match from a `POST /matches` body,
  resumes one from its metadata file, and the hosted match drives, journals,
  summarizes (`GET /matches/{id}`) and feeds spectators;
- an *offline* game (Commit-0, project attempts) scores a submission into a
  result document;
- a *night* game (golf's file submissions, Commit-0, project attempts) is the
  part of a game a league night plays from submitted files: it reads its
  night-file section, lists what it plays, scores one entrant's submission into
  a result file, reads result files back and makes its table of the standings.
  The league's one path (schedule, execute, collect, verify, tabulate) is written
  against it; the combined table is a function over every game's `GameTable`.

The hole collector (`cogolf.engine.collect`) is generic over seats, so a live
game's driver reuses it; the engine's rules stay pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol, runtime_checkable

import msgspec

if TYPE_CHECKING:
    from cogolf.deck import Deck
    from cogolf.sandbox.api import Sandbox
    from cogolf.server.requests import CreateMatch
    from cogolf.server.seat import WebSocketSeat
    from cogolf.server.spectators import Feed


class Host(Protocol):
    """What the server lends a live game to host its matches."""

    replays_dir: Path  # <match_id>.ndjson journals
    meta_dir: Path  # <match_id>.json configuration and token hashes
    decks: dict[str, Deck]  # Cogolf packs by name; the first is the default
    sandbox: Sandbox
    connect_timeout: float
    settings: Mapping[str, Any]  # per-game settings by game name (e.g. golf's limits)


class HostedGame(Protocol):
    """A live match as the server hosts it, whatever the game."""

    seats: list[WebSocketSeat]
    status: str  # waiting | playing | finished
    task: asyncio.Task[None] | None
    replay_path: Path  # the journal (NDJSON), served by GET /matches/{id}/replay.ndjson

    @property
    def match_id(self) -> str: ...

    def check_token(self, slot: int, token: str) -> bool: ...

    def save_meta(self) -> None: ...

    def start(self) -> None: ...

    def welcome(self, slot: int) -> msgspec.Struct: ...

    def watch(self) -> Feed: ...

    def unwatch(self, feed: Feed) -> None: ...

    def snapshot(self) -> msgspec.Struct: ...

    def status_doc(self) -> dict[str, Any]:
        """The summary served by GET /matches/{id}."""
        ...


@runtime_checkable
class LiveGame(Protocol):
    """A game played live over websockets."""

    name: str  # the `game` field of POST /matches and of its metadata files
    seats: int

    def schemas(self) -> dict[str, Any]:
        """JSON Schema of its wire messages and replay records, by direction."""
        ...

    def create(
        self, req: CreateMatch, host: Host, match_id: str
    ) -> tuple[HostedGame, list[str]]:
        """A new, not yet started match and its seat tokens; RequestError when refused."""
        ...

    def resume(self, path: Path, host: Host) -> HostedGame | None:
        """Host again the match persisted at `path` (finished or not); None when unreadable."""
        ...


@runtime_checkable
class OfflineGame(Protocol):
    """A game scored from submitted files into result documents the league tabulates."""

    name: str  # the `game` field of its result documents

    async def score(self, task_dir: Path, submission: Path, *, entrant: str) -> dict[str, Any]:
        """Score one submission on the task at `task_dir`: its result document."""
        ...

    def load_results(self, folder: Path) -> list[Any]:
        """Every result of this game under `folder` (other games' files skipped), checked."""
        ...

    def table(self, records: list[Any]) -> list[Any]:
        """Rows best first; each has `to_json()`."""
        ...


@runtime_checkable
class AgentTask(Protocol):
    """An offline task as a coding agent plays it (`cogolf.agents`): the workspace it
    starts from, what it is told, and how the diff it leaves is scored through the
    game's own scoring path on a clean copy."""

    game: str  # the game whose result document `score` writes
    name: str

    def workspace(self, dest: Path) -> None:
        """Write the files the agent starts from into the new folder `dest`."""
        ...

    def prompt(self) -> str:
        """The task as the agent reads it, with the feedback it may use."""
        ...

    def reference(self) -> dict[str, bytes]:
        """The reference solution's files by relative path, for the oracle ({}: none)."""
        ...

    async def score(self, patch: Path, *, entrant: str, attempt: int) -> dict[str, Any]:
        """The game's result document for the workspace's diff (a patch file)."""
        ...

    def unscored(self, notes: list[str], *, entrant: str, attempt: int) -> dict[str, Any]:
        """The game's result document of a submission that could not be made (0 points)."""
        ...

    def points(self, doc: dict[str, Any]) -> float: ...

    def result_name(self, entrant: str, attempt: int) -> str: ...


class SectionError(Exception):
    """A problem with one field of a game's night-file section; `at` is the field's path
    below the section (e.g. `("tasks", 2)`), so the league can name its line."""

    def __init__(self, at: tuple[str | int, ...], problem: str) -> None:
        super().__init__(problem)
        self.at, self.problem = at, problem


class SectionProblems(Exception):
    """Several problems of one section at once, so that a night file's check names them all."""

    def __init__(self, each: list[SectionError]) -> None:
        super().__init__("; ".join(e.problem for e in each))
        self.each = each


class JobFault(Exception):
    """A night job that could not be played; `retry` is False when trying again cannot help."""

    def __init__(self, cause: str, *, retry: bool = True) -> None:
        super().__init__(cause)
        self.cause, self.retry = cause, retry


class ResultFileError(ValueError):
    """A result file that cannot count; the message names the file and the reason."""


class Section(Protocol):
    """The league's reader of one night-file table: every error names file, line and field."""

    def fail(self, key: str | None, problem: str) -> Exception: ...

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        ...

    def string_list(self, key: str, *, required: bool = False) -> list[str]: ...

    def integer(self, key: str, default: int, low: int, high: int) -> int: ...

    def number(self, key: str, default: float, high: float) -> float: ...

    def boolean(self, key: str, default: bool) -> bool: ...


@dataclass(frozen=True)
class GamePlan:
    """What a night plays of one game: its items (courses, tasks) and attempts of each."""

    items: tuple[str, ...]
    attempts: int  # of each item, in games with attempts; 0 in the others
    state: Any = None  # the game's own loaded tasks or settings, handed to its session


@dataclass(frozen=True)
class NightJob:
    """One result file of a night: an entrant's submission for one item (and attempt)."""

    game: str
    entrant: str
    item: str  # the course or task name
    attempt: int  # counts from 1 in games with attempts; 0 in the others
    submission: Path | None  # None: the entrant's agent plays the job itself
    agent: Any = None  # the entrant's `cogolf.agents.spec.AgentSpec`, for an agent's job

    @property
    def label(self) -> str:
        what = f"{self.item} attempt {self.attempt}" if self.attempt else self.item
        return f"{self.game} {self.entrant} {what}"


@dataclass(frozen=True)
class NightSetup:
    """What the night plays of a game, as the standings see it (from the manifest or files)."""

    items: tuple[str, ...]
    attempts: int
    entrants: frozenset[str] | None  # None: any name found in the files


@dataclass
class GameTable:
    """One game's part of the standings: its document and, for the combined table, a
    sort key (lower is better) for each entrant with a complete result in it."""

    doc: dict[str, Any]
    keys: dict[str, tuple[float, ...]] = field(default_factory=dict)


class NightSession(Protocol):
    """A game's jobs of one night run, sharing what they load once (runners, tasks)."""

    async def prepare(self) -> None: ...

    def kept(self, job: NightJob, path: Path) -> bool:
        """True when `path` already holds a valid result of this job (resume keeps it)."""
        ...

    async def play(self, job: NightJob, path: Path) -> str:
        """Score the job into `path`; a one-line summary. JobFault when it cannot be played."""
        ...

    def close(self) -> None: ...


class AgentSession(NightSession, Protocol):
    """The session of a game agents play (`league.night.AGENT_GAMES`): an agent's job is
    played by the night's agent runner, on this machine or a Ray worker, not by `play`."""

    def agent_task(self, job: NightJob) -> AgentTask:
        """The task the job's agent plays; JobFault when it cannot be played."""
        ...


@runtime_checkable
class NightGame(Protocol):
    """The part of a game a league night plays from submitted files."""

    name: str  # its night-file section, entrant field and results folder
    fields: tuple[str, ...]  # the fields of its section
    placeholders: tuple[str, ...]  # of an entrant's path template
    with_attempts: bool  # several attempts per item, numbered in the file names
    patch_files: bool  # a submission may be one file, not only a folder

    def parse_section(self, section: Section, base: Path) -> Any:
        """The section's settings; errors through `section.fail` or SectionError."""
        ...

    def plan(self, settings: Any, *, check_toolchains: bool) -> GamePlan:
        """Load what the night plays; SectionError naming the field when it cannot."""
        ...

    def template_fields(self, item: str, attempt: int) -> dict[str, str | int]: ...

    def result_name(self, entrant: str, item: str, attempt: int, night: str) -> str: ...

    def session(self, plan: GamePlan, night_dir: Path, night: str) -> NightSession: ...

    def read_result(self, path: Path, night: str, source: str) -> Any:
        """A result file of this night, checked; ResultFileError otherwise."""
        ...

    def result_key(self, record: Any) -> tuple[str, str, int]:
        """(entrant, item, attempt) of a record."""
        ...

    def table(self, records: list[Any], setup: NightSetup, void: list[dict[str, Any]],
              problems: list[str]) -> GameTable: ...

    def default_setup(self, records: list[Any]) -> NightSetup:
        """What the night played, inferred from the files (a folder without a manifest)."""
        ...

    def render(self, doc: dict[str, Any]) -> list[str]:
        """Its table as text, from the standings document alone."""
        ...


class _GameField(msgspec.Struct):
    game: str = "cogolf"


def meta_game(data: bytes) -> str:
    """The game named by a metadata file (Cogolf's files predate the field)."""
    try:
        return msgspec.json.decode(data, type=_GameField).game
    except (msgspec.DecodeError, msgspec.ValidationError):
        return "cogolf"
