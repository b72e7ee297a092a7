"""A match hosted by the server: its seats, its journal, its spectators, its life.

A hosted match is created by `POST /matches` (or `--single`), waits for both
seats (or the connect timeout), plays through the driver, and is persisted as
two files under the data directory: `matches/<id>.json` (configuration and
token hashes, never the tokens) and `replays/<id>.ndjson` (the journal). A
server started again on the same directory resumes every match whose journal
has no result line, at its first unresolved hole.
"""

from __future__ import annotations

import asyncio
import time
from pathlib import Path
from typing import Any

import msgspec
import structlog

from cogolf import messages as m
from cogolf.deck import Deck, DeckError
from cogolf.engine import rules
from cogolf.engine.match import Match, MatchConfig, resolved_from_records
from cogolf.matchid import is_match_id
from cogolf.replay import ReplayError, ReplayWriter, read_replay
from cogolf.runtime.driver import MatchDriver
from cogolf.runtime.local import new_match, replay_header
from cogolf.sandbox.api import Limits, Sandbox
from cogolf.server.hosting import HostedBase

log = structlog.get_logger("cogolf.server")


class MatchMeta(msgspec.Struct, kw_only=True):
    """What the server persists about a match besides its journal."""

    match_id: str
    config: MatchConfig
    token_hashes: list[str]
    deck: str  # the pack name
    created_at: float


def journal_prefix(
    path: Path, deck: Deck, match_id: str | None = None
) -> tuple[Match, int | None, str]:
    """Read a journal for resuming: the match state and where its last resolved hole ends.

    Returns (match, offset, problem). Records after `offset` belong to a hole that did
    not resolve and are cut off before play resumes. When `problem` is not empty the
    match cannot resume (another deck, another draw): offset is None and the match
    is ended as a harness fault with its resolved holes kept as they were.
    Raises ReplayError when the journal cannot be read at all.
    """
    replay = read_replay(path)
    h = replay.header
    try:
        config = msgspec.convert(h.config, MatchConfig)
    except msgspec.ValidationError as exc:
        raise ReplayError(f"{path}:1: config: {exc}") from None
    problem = ""
    if match_id is not None and h.match_id != match_id:
        problem = f"the journal is match {h.match_id!r}'s, not {match_id!r}'s"
    elif h.deck_digest != deck.digest:
        problem = f"deck digest {h.deck_digest} differs from the loaded deck {deck.digest}"
    else:
        try:
            if deck.draw(config.seed, config.holes) != h.holes:
                problem = "the seeded draw does not match the journal header"
        except DeckError as exc:
            problem = f"the journal's config cannot be drawn: {exc}"
    specs = {k: deck.spec(k) for k in h.holes} if not problem else {}
    match = Match(h.match_id, config, list(h.holes), specs)
    for r in resolved_from_records(replay.events):
        match.add(r)
    if problem:
        return match, None, problem
    data = path.read_bytes()
    offset = data.find(b"\n") + 1
    if match.resolved:
        last = match.resolved[-1].hole
        pos = offset
        for line in data[offset:].split(b"\n"):
            pos += len(line) + 1
            if b'"kind":"hole_score"' not in line:
                continue
            try:
                rec = msgspec.json.decode(line, type=m.HoleScore)
            except msgspec.DecodeError:
                continue
            if rec.hole == last:
                offset = pos
                break
    return match, offset, ""


class HostedMatch(HostedBase):
    def __init__(
        self,
        meta: MatchMeta,
        deck: Deck,
        sandbox: Sandbox,
        replays_dir: Path,
        meta_dir: Path,
        *,
        connect_timeout: float,
    ) -> None:
        super().__init__(
            meta,
            seats=2,
            replays_dir=replays_dir,
            meta_dir=meta_dir,
            connect_timeout=connect_timeout,
            task_prefix="match",
        )
        self.meta: MatchMeta = meta
        self.deck = deck
        self.sandbox = sandbox
        self.match: Match | None = None
        self.driver: MatchDriver | None = None
        self.result: m.MatchResult | None = None
        self.log = log.bind(match_id=meta.match_id)

    def welcome(self, slot: int) -> m.Welcome:
        cfg = self.meta.config
        return m.Welcome(
            protocol="cogame.cogolf.v1",
            match_id=self.match_id,
            slot=slot,
            alias=rules.ALIASES[slot],
            opponent_alias=rules.ALIASES[1 - slot],
            holes=cfg.holes,
            hole_deadline_seconds=cfg.hole_deadline_seconds,
            retry_deadline_seconds=cfg.retry_deadline_seconds,
            rules=rules.RULES,
            resumed=self.resumed or self.status == "playing",
        )

    async def _wait_for_seats(self) -> None:
        waits = [asyncio.create_task(s.connected_event.wait()) for s in self.seats]
        try:
            _, pending = await asyncio.wait(waits, timeout=self.connect_timeout)
        finally:
            for w in waits:
                w.cancel()
        if pending:
            absent = [s.slot for s in self.seats if not s.ever_connected]
            self.log.warning("connect_timeout", absent=absent)

    async def _run(self) -> None:
        try:
            await self._play()
        except asyncio.CancelledError:
            self.log.info("match_interrupted")  # the journal stays resumable
            raise
        except Exception as exc:
            self.log.exception("match_crashed")
            await self._end_after_crash(f"{type(exc).__name__}: {exc}")
        finally:
            self.spectators.end(self.result)

    async def _end_after_crash(self, detail: str) -> None:
        """A failure outside the driver's own protection still ends the match with a
        result line and tells the seats, keeping whatever holes were resolved."""
        if self.result is not None:
            return
        try:
            match = self.match or new_match(self.deck, self.meta.config, self.match_id)
            append = self.replay_path.exists() and self.replay_path.stat().st_size > 0
            with ReplayWriter(self.replay_path, append=append) as writer:
                if not append:
                    writer.write(replay_header(match, self.deck, self.sandbox))
                driver = MatchDriver(
                    match, self.deck, self.seats, self.sandbox, writer, limits=Limits()
                )
                self.result = await driver.fail("harness_fault", detail)
            self.status = "finished"
        except Exception:
            self.log.exception("match_unrecoverable")
            self.status = "failed"

    async def _play(self) -> None:
        append = self.replay_path.exists() and self.replay_path.stat().st_size > 0
        problem, offset = "", None
        if append:
            try:
                match, offset, problem = journal_prefix(self.replay_path, self.deck, self.match_id)
            except ReplayError as exc:
                # Keep the unreadable journal for inspection; the match gets a fresh one
                # that records why it could not go on.
                broken = self.replay_path.with_suffix(".ndjson.broken")
                self.replay_path.replace(broken)
                match = new_match(self.deck, self.meta.config, self.match_id)
                problem, append = f"journal unreadable ({exc}); kept as {broken.name}", False
            self.resumed = True
        else:
            match = new_match(self.deck, self.meta.config, self.match_id)
            # The journal exists from the moment the match does, header first. An empty
            # file is one whose creation was interrupted: it holds nothing to keep.
            if self.replay_path.exists():
                self.replay_path.unlink()
            with ReplayWriter(self.replay_path) as writer:
                writer.write(replay_header(match, self.deck, self.sandbox))
            append = True
        self.match = match
        if problem:
            self.log.error("cannot_resume", problem=problem)
        else:
            await self._wait_for_seats()
            if offset is not None:
                with open(self.replay_path, "r+b") as f:
                    f.truncate(offset)
                self.log.info("match_resumed", next_hole=match.next_hole)
        self.status = "playing"
        with ReplayWriter(self.replay_path, append=append) as writer:
            if not append:
                writer.write(replay_header(match, self.deck, self.sandbox))
            driver = MatchDriver(
                match,
                self.deck,
                self.seats,
                self.sandbox,
                writer,
                limits=Limits(),
                on_event=self.spectators.event,
            )
            self.driver = driver
            if problem:
                self.result = await driver.fail("harness_fault", f"cannot resume: {problem}")
            else:
                self.result = await driver.run()
        self.status = "finished"

    # ------------------------------------------------------------ spectators

    def snapshot(self) -> m.WatchSnapshot:
        match = self.match
        resolved = [r.score for r in match.resolved] if match else []
        return m.WatchSnapshot(
            match_id=self.match_id,
            status=self.status,
            hole=match.next_hole if match and not match.finished else len(resolved),
            holes=self.meta.config.holes,
            scores=list(match.scores) if match else [0, 0],
            aliases=list(rules.ALIASES),
            names=list(self.meta.config.names),
            resolved=resolved,
        )

    def status_doc(self) -> dict[str, Any]:
        snap = self.snapshot()
        return {
            "match_id": self.match_id,
            "status": self.status,
            "hole": snap.hole,
            "holes": snap.holes,
            "scores": snap.scores,
            "names": snap.names,
            "aliases": snap.aliases,
            "seats_connected": [s.connected for s in self.seats],
            "reason": self.result.reason if self.result else None,
            "created_at": self.meta.created_at,
        }


def load_meta(path: Path) -> MatchMeta:
    """A match's metadata; its id must be a match id and the file's own name."""
    try:
        meta = msgspec.json.decode(path.read_bytes(), type=MatchMeta)
    except (OSError, msgspec.DecodeError) as exc:
        raise ReplayError(f"{path}: {exc}") from None
    if not is_match_id(meta.match_id) or meta.match_id != path.stem:
        raise ReplayError(f"{path}: match_id {meta.match_id[:100]!r} does not name this file")
    return meta


def now() -> float:
    return time.time()
