"""A solo golf match hosted by the server: one seat, its journal, its spectators, its life.

It offers the server what every hosted match offers (`cogolf.game.HostedGame`:
seats, tokens, welcome, snapshot, status, watchers, a task), so the endpoints
serve both games; the registry only dispatches on `game`. Persisted like a Cogolf match:
`matches/<id>.json` (configuration, token hashes) and `replays/<id>.ndjson` (the
journal). A server started again on the same data directory resumes the match
after its last scored hole; the course result document is written when the
match completes.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal

import msgspec
import structlog

from cogolf.games.golf.courses import COURSES, Course, get_course
from cogolf.games.golf.driver import GolfDriver, golf_header
from cogolf.games.golf.holes import GolfDataError, HoleSet, load_holes
from cogolf.games.golf.journal import GolfReplayError, read_golf_replay
from cogolf.games.golf.results import ResultError, check_model
from cogolf.games.golf.runners.base import RunLimits
from cogolf.games.golf.settings import GolfSettings
from cogolf.games.golf.solo import golf_rules
from cogolf.games.golf.toolchains import ToolchainError
from cogolf.games.golf.wire import (
    DEFAULT_HOLE_DEADLINE_SECONDS,
    DEFAULT_MODEL,
    DEFAULT_RETRY_DEADLINE_SECONDS,
    HOLE_COUNT,
    GolfConfig,
    GolfMatchResult,
    GolfReplayHeader,
    GolfSnapshot,
    GolfWelcome,
)
from cogolf.replay import ReplayWriter
from cogolf.server.hosting import HostedBase
from cogolf.server.meta import token_hash
from cogolf.server.requests import (
    MAX_NAME_CHARS,
    CreateMatch,
    RequestError,
    check_deadline,
    check_tokens,
)

if TYPE_CHECKING:
    from cogolf.game import Host as Registry

log = structlog.get_logger("cogolf.server")



class GolfMeta(msgspec.Struct, kw_only=True):
    """What the server persists about a golf match besides its journal."""

    game: Literal["golf"] = "golf"
    match_id: str
    config: GolfConfig
    token_hashes: list[str]
    created_at: float


class HostedGolfMatch(HostedBase):
    game = "golf"

    def __init__(
        self,
        meta: GolfMeta,
        holes: HoleSet,
        course: Course,
        limits: RunLimits,
        *,
        replays_dir: Path,
        meta_dir: Path,
        results_dir: Path,
        connect_timeout: float,
    ) -> None:
        self.holes = holes
        self.course = course
        self.limits = limits
        self.runner = course.runner(limits)  # raises ToolchainError when the language is missing
        super().__init__(
            meta,
            seats=1,
            replays_dir=replays_dir,
            meta_dir=meta_dir,
            connect_timeout=connect_timeout,
            task_prefix="golf",
        )
        self.meta: GolfMeta = meta
        self.results_dir = results_dir
        self.result: GolfMatchResult | None = None
        self.driver: GolfDriver | None = None
        self.log = log.bind(match_id=meta.match_id, game="golf")

    def welcome(self, slot: int) -> GolfWelcome:
        cfg = self.meta.config
        return GolfWelcome(
            match_id=self.match_id,
            slot=slot,
            course=cfg.course,
            holes=len(self.holes.holes),
            hole_deadline_seconds=cfg.hole_deadline_seconds,
            retry_deadline_seconds=cfg.retry_deadline_seconds,
            rules=golf_rules(self.course, self.limits),
            resumed=self.resumed or self.status == "playing",
        )

    def header(self) -> GolfReplayHeader:
        return golf_header(self.match_id, self.meta.config, self.holes)

    async def _wait_for_seat(self) -> None:
        seat = self.seats[0]
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(seat.connected_event.wait(), self.connect_timeout)
        if not seat.ever_connected:
            self.log.warning("connect_timeout", absent=[0])

    async def _run(self) -> None:
        try:
            await self._play()
        except asyncio.CancelledError:
            self.log.info("match_interrupted")  # the journal stays resumable
            raise
        except Exception:
            self.log.exception("match_crashed")
            self.status = "failed"
        finally:
            self.spectators.end(self.result)
            # the Python course's sandbox (a fork server and its warm children) ends
            # with the match, off the server's loop; a resumed match starts a new one
            await asyncio.to_thread(self.runner.close)

    def _resume_point(self) -> tuple[list[Any], int | None, str]:
        """Scored holes, the journal offset to cut at, and why the match cannot go on."""
        try:
            replay = read_golf_replay(self.replay_path)
        except GolfReplayError as exc:
            broken = self.replay_path.with_suffix(".ndjson.broken")
            self.replay_path.replace(broken)
            return [], None, f"journal unreadable ({exc}); kept as {broken.name}"
        h = replay.header
        if h.match_id != self.match_id or h.holes != [x.key for x in self.holes.holes]:
            return replay.scored, None, "the journal was played on other holes or another match"
        return replay.scored, replay.resolved_end, ""

    async def _play(self) -> None:
        results: list[Any] = []
        problem = ""
        if self.replay_path.exists() and self.replay_path.stat().st_size > 0:
            self.resumed = True
            results, offset, problem = self._resume_point()
            if offset is not None:
                with open(self.replay_path, "r+b") as f:
                    f.truncate(offset)
        else:
            with ReplayWriter(self.replay_path) as writer:  # the journal exists from the start
                writer.write(self.header())  # type: ignore[arg-type]
        append = self.replay_path.exists()
        if not problem:
            await self._wait_for_seat()
            if results:
                self.log.info("match_resumed", next_hole=len(results) + 1)
        self.status = "playing"
        with ReplayWriter(self.replay_path, append=append) as writer:
            if not append:
                writer.write(self.header())  # type: ignore[arg-type]
            driver = GolfDriver(
                match_id=self.match_id,
                config=self.meta.config,
                course=self.course,
                holes=self.holes,
                runner=self.runner,
                limits=self.limits,
                seat=self.seats[0],
                writer=writer,
                results_dir=self.results_dir,
                results=results,
                on_event=self.spectators.event,
            )
            self.driver = driver
            if problem:
                self.log.error("cannot_resume", problem=problem)
                self.result = await driver.finish("harness_fault", f"cannot resume: {problem}")
            else:
                self.result = await driver.run()
        self.status = "finished"

    # ------------------------------------------------------------ spectators

    def _resolved(self) -> list[Any]:
        if self.driver is not None:
            return list(self.driver.results)
        if self.result is not None and self.result.document is not None:
            return list(self.result.document.holes)
        return []

    def snapshot(self) -> GolfSnapshot:
        resolved = self._resolved()
        finished = self.status in ("finished", "failed")
        return GolfSnapshot(
            match_id=self.match_id,
            status=self.status,
            course=self.meta.config.course,
            hole=len(resolved) if finished else len(resolved) + 1,
            holes=len(self.holes.holes),
            score=round(sum(r.score for r in resolved), 2),
            names=[self.meta.config.model],
            resolved=resolved,
        )

    def status_doc(self) -> dict[str, Any]:
        snap = self.snapshot()
        return {
            "match_id": self.match_id,
            "game": "golf",
            "course": snap.course,
            "status": self.status,
            "hole": snap.hole,
            "holes": snap.holes,
            "scores": [snap.score],
            "names": snap.names,
            "aliases": [self.welcome(0).alias],
            "seats_connected": [s.connected for s in self.seats],
            "reason": self.result.reason if self.result else None,
            "result_file": self.result.result_file if self.result else None,
            "created_at": self.meta.created_at,
        }


# ---------------------------------------------------------------- creation and resume


def _config(req: CreateMatch, limits: RunLimits) -> GolfConfig:
    for name in ("seed", "deck", "match_deadline_seconds"):
        if getattr(req, name) is not None:
            raise RequestError(f"{name}: not used by golf matches; leave it out")
    if req.course is None:
        raise RequestError(f"course: required for a golf match ({', '.join(COURSES)})")
    if req.course not in COURSES:
        raise RequestError(f"course: unknown course {req.course!r}; choose {', '.join(COURSES)}")
    if req.holes is not None and req.holes != HOLE_COUNT:
        raise RequestError(f"holes: a golf course always has {HOLE_COUNT} holes")
    names = req.names or [DEFAULT_MODEL]
    if len(names) != 1 or not isinstance(names[0], str):
        raise RequestError("names: a golf match has one seat; give one model name")
    if len(names[0]) > MAX_NAME_CHARS:
        raise RequestError(f"names[0]: at most {MAX_NAME_CHARS} characters")
    try:
        model = check_model(names[0])
    except ResultError as exc:
        raise RequestError(f"names[0]: {exc}") from None
    return GolfConfig(
        course=req.course,
        model=model,
        hole_deadline_seconds=check_deadline(
            "hole_deadline_seconds", req.hole_deadline_seconds, DEFAULT_HOLE_DEADLINE_SECONDS
        ),
        retry_deadline_seconds=check_deadline(
            "retry_deadline_seconds", req.retry_deadline_seconds, DEFAULT_RETRY_DEADLINE_SECONDS
        ),
        per_test_seconds=limits.per_test_seconds,
        per_hole_seconds=limits.per_hole_seconds,
    )


def _host(meta: GolfMeta, registry: Registry, settings: GolfSettings) -> HostedGolfMatch:
    try:
        holes = load_holes()
        return HostedGolfMatch(
            meta,
            holes,
            get_course(meta.config.course),
            RunLimits(
                per_test_seconds=meta.config.per_test_seconds,
                per_hole_seconds=meta.config.per_hole_seconds,
                compile_seconds=settings.limits.compile_seconds,
                memory_bytes=settings.limits.memory_bytes,
                compile_memory_bytes=settings.limits.compile_memory_bytes,
                max_output_bytes=settings.limits.max_output_bytes,
            ),
            replays_dir=registry.replays_dir,
            meta_dir=registry.meta_dir,
            results_dir=settings.results_dir or registry.replays_dir.parent / "results" / "golf",
            connect_timeout=registry.connect_timeout,
        )
    except (GolfDataError, ToolchainError, ValueError) as exc:
        raise RequestError(f"course: {meta.config.course} cannot be hosted here: {exc}") from None


def create_golf_match(
    req: CreateMatch, registry: Registry, settings: GolfSettings, match_id: str
) -> tuple[HostedGolfMatch, list[str]]:
    """A new, not yet started golf match from a `POST /matches` body with game golf."""
    config = _config(req, settings.limits)
    tokens = check_tokens(req.tokens, 1)
    meta = GolfMeta(
        match_id=match_id,
        config=config,
        token_hashes=[token_hash(tokens[0])],
        created_at=time.time(),
    )
    return _host(meta, registry, settings), tokens


def is_golf_meta(data: bytes) -> bool:
    class _Game(msgspec.Struct):
        game: str = "cogolf"

    try:
        return msgspec.json.decode(data, type=_Game).game == "golf"
    except (msgspec.DecodeError, msgspec.ValidationError):
        return False


def host_persisted(
    path: Path, registry: Registry, settings: GolfSettings
) -> HostedGolfMatch | None:
    """Host again a golf match found in the data directory; None when it cannot be read."""
    try:
        meta = msgspec.json.decode(path.read_bytes(), type=GolfMeta)
        hosted = _host(meta, registry, settings)
    except (OSError, msgspec.DecodeError, msgspec.ValidationError, RequestError) as exc:
        log.error("bad_match_file", path=path.name, error=str(exc))
        return None
    if hosted.replay_path.exists():
        with contextlib.suppress(GolfReplayError):
            replay = read_golf_replay(hosted.replay_path)
            if replay.result is not None:
                hosted.status, hosted.result = "finished", replay.result
    return hosted
