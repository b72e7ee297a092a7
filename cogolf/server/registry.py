"""The server's matches: creating them from requests, finding them, resuming them.

All state lives under the data directory, so a server killed at any moment and
started again on the same directory finds every match it had. A request with
`game: "golf"` is handed to the golf package (`cogolf.golf.hosted`), which hosts
a one-seat match behind the same endpoints.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import re
import secrets
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING

import msgspec
import structlog

from cogolf.deck import Deck
from cogolf.engine import rules
from cogolf.engine.match import MatchConfig
from cogolf.golf.settings import GolfSettings
from cogolf.matchid import MatchIdError, check_match_id, is_match_id, new_match_id
from cogolf.replay import ReplayError, read_replay
from cogolf.sandbox.api import Sandbox
from cogolf.sandbox.interpreter import MAX_HASH_SEED
from cogolf.server.hosted import HostedMatch, MatchMeta, load_meta, token_hash
from cogolf.text import clip

if TYPE_CHECKING:
    from cogolf.golf.hosted import HostedGolfMatch

log = structlog.get_logger("cogolf.server")

MAX_NAME_CHARS = 64
MIN_DEADLINE, MAX_DEADLINE = 0.05, 3600.0
MAX_MATCH_DEADLINE = 86400.0
TOKEN_PATTERN = re.compile(r"[A-Za-z0-9_-]{8,200}")  # URL-safe: seat URLs carry it as is


class CreateMatch(msgspec.Struct, forbid_unknown_fields=True, kw_only=True):
    """The body of `POST /matches`; every field is optional (`course` is needed for golf)."""

    game: str = "cogolf"  # cogolf | golf
    course: str | None = None  # golf: python | racket | rust
    seed: int | None = None
    holes: int | None = None
    hole_deadline_seconds: float | None = None
    retry_deadline_seconds: float | None = None
    match_deadline_seconds: float | None = None
    names: list[str] | None = None
    deck: str | None = None
    tokens: list[str] | None = None  # for operators who hand out tokens themselves
    match_id: str | None = None
    hash_seed: int | None = None  # PYTHONHASHSEED of the match's programs (default: from its id)


class RequestError(ValueError):
    """A request the server refuses, with the field and the reason."""


def check_tokens(tokens: list[str] | None, seats: int) -> list[str]:
    """The seat tokens: given ones checked (URL-safe, one per seat, all different), or new."""
    if tokens is None:
        return [secrets.token_urlsafe(18) for _ in range(seats)]
    if len(tokens) != seats:
        raise RequestError(f"tokens: give {seats} token(s), one per seat; got {len(tokens)}")
    for i, token in enumerate(tokens):
        if not isinstance(token, str) or not TOKEN_PATTERN.fullmatch(token):
            raise RequestError(
                f"tokens[{i}]: 8 to 200 characters from A-Z a-z 0-9 _ - "
                "(they go into seat URLs unescaped)"
            )
    if len(set(tokens)) != len(tokens):
        raise RequestError("tokens: every seat needs its own token; two are the same")
    return list(tokens)


def check_deadline(
    name: str, value: float | None, default: float, most: float = MAX_DEADLINE
) -> float:
    if value is None:
        return default
    if not MIN_DEADLINE <= value <= most:
        raise RequestError(f"{name} must be between {MIN_DEADLINE} and {most} seconds")
    return float(value)


def check_hash_seed(value: int | None) -> int | None:
    if value is not None and not 0 <= value <= MAX_HASH_SEED:
        raise RequestError(f"hash_seed must be between 0 and {MAX_HASH_SEED}")
    return value


@dataclass
class Registry:
    replays_dir: Path  # <match_id>.ndjson journals
    meta_dir: Path  # <match_id>.json configuration and token hashes
    decks: dict[str, Deck]  # by pack name; the first is the default
    sandbox: Sandbox
    connect_timeout: float = 30.0
    golf: GolfSettings = field(default_factory=GolfSettings)
    matches: dict[str, HostedMatch | HostedGolfMatch] = field(default_factory=dict)

    @property
    def default_deck(self) -> str:
        return next(iter(self.decks))

    def get(self, match_id: str) -> HostedMatch | HostedGolfMatch | None:
        return self.matches.get(match_id)

    def _new_match_id(self, wanted: str | None) -> str:
        """A valid, unused id, claimed on disk by creating its metadata file exclusively
        (so two servers on one directory can never host the same match)."""
        try:
            match_id = check_match_id(wanted) if wanted is not None else new_match_id()
        except MatchIdError as exc:
            raise RequestError(str(exc)) from None
        meta_path = self.meta_dir / f"{match_id}.json"
        taken = match_id in self.matches or (self.replays_dir / f"{match_id}.ndjson").exists()
        if not taken:
            self.meta_dir.mkdir(parents=True, exist_ok=True)
            try:
                os.close(os.open(meta_path, os.O_CREAT | os.O_EXCL | os.O_WRONLY, 0o600))
            except FileExistsError:
                taken = True
        if taken:
            raise RequestError(f"match_id {match_id!r} exists")
        return match_id

    def create(self, req: CreateMatch) -> tuple[HostedMatch | HostedGolfMatch, list[str]]:
        if req.game == "golf":
            return self._create_golf(req)
        if req.game != "cogolf":
            raise RequestError(f"game: unknown game {req.game!r}; choose cogolf or golf")
        if req.course is not None:
            raise RequestError("course: only golf matches have a course")
        if not self.decks:
            raise RequestError("game: this server hosts golf matches only (no Cogolf deck)")
        deck_name = req.deck or self.default_deck
        deck = self.decks.get(deck_name)
        if deck is None:
            raise RequestError(f"deck: unknown pack {deck_name!r}; known: {sorted(self.decks)}")
        holes = (
            req.holes if req.holes is not None else min(rules.DEFAULT_HOLES, len(deck.spec_keys()))
        )
        if not 1 <= holes <= len(deck.spec_keys()):
            raise RequestError(f"holes must be between 1 and {len(deck.spec_keys())}")
        names = req.names or ["seat0", "seat1"]
        if len(names) != 2 or not all(isinstance(n, str) and n.strip() for n in names):
            raise RequestError("names must be two non-empty strings")
        if any(len(n) > MAX_NAME_CHARS for n in names):
            raise RequestError(f"names must be at most {MAX_NAME_CHARS} characters")
        seed = req.seed if req.seed is not None else secrets.randbelow(2**31)
        if not 0 <= seed < 2**63:
            raise RequestError("seed must be between 0 and 2**63 - 1")
        tokens = check_tokens(req.tokens, 2)
        match_id = self._new_match_id(req.match_id)
        config = MatchConfig(
            seed=seed,
            holes=holes,
            hole_deadline_seconds=check_deadline(
                "hole_deadline_seconds", req.hole_deadline_seconds, rules.HOLE_DEADLINE_SECONDS
            ),
            retry_deadline_seconds=check_deadline(
                "retry_deadline_seconds", req.retry_deadline_seconds, rules.RETRY_DEADLINE_SECONDS
            ),
            match_deadline_seconds=check_deadline(
                "match_deadline_seconds", req.match_deadline_seconds, 1800.0, MAX_MATCH_DEADLINE
            ),
            names=(clip(names[0], MAX_NAME_CHARS), clip(names[1], MAX_NAME_CHARS)),
            hash_seed=check_hash_seed(req.hash_seed),
        )
        meta = MatchMeta(
            match_id=match_id,
            config=config,
            token_hashes=[token_hash(t) for t in tokens],
            deck=deck_name,
            created_at=time.time(),
        )
        hosted = self._host(meta, deck)
        hosted.save_meta()
        hosted.start()
        log.info("match_created", match_id=match_id, deck=deck_name, holes=holes)
        return hosted, tokens

    def _create_golf(self, req: CreateMatch) -> tuple[HostedGolfMatch, list[str]]:
        from cogolf.golf.hosted import create_golf_match

        match_id = self._new_match_id(req.match_id)
        try:
            hosted, tokens = create_golf_match(req, self, self.golf, match_id)
        except Exception:
            (self.meta_dir / f"{match_id}.json").unlink(missing_ok=True)  # free the claim
            raise
        self.matches[hosted.match_id] = hosted
        hosted.save_meta()
        hosted.start()
        log.info("match_created", match_id=hosted.match_id, game="golf", course=req.course)
        return hosted, tokens

    def _resume_golf(self, path: Path) -> bool:
        """Host a persisted golf match again; True when it was started (unfinished)."""
        from cogolf.golf.hosted import host_persisted

        hosted = host_persisted(path, self, self.golf)
        if hosted is None:
            return False
        self.matches[hosted.match_id] = hosted
        if hosted.status == "finished":
            return False
        hosted.start()
        return True

    def _host(self, meta: MatchMeta, deck: Deck) -> HostedMatch:
        hosted = HostedMatch(
            meta,
            deck,
            self.sandbox,
            self.replays_dir,
            self.meta_dir,
            connect_timeout=self.connect_timeout,
        )
        self.matches[meta.match_id] = hosted
        return hosted

    def resume_all(self) -> list[str]:
        """Host again every persisted match; start the unfinished ones. Returns their ids."""
        resumed = []
        from cogolf.golf.hosted import is_golf_meta

        for path in sorted(self.meta_dir.glob("*.json")):
            problem = _meta_id_problem(path)
            if problem:
                log.error("bad_match_file", path=path.name, error=problem)
                continue
            with contextlib.suppress(OSError):
                if is_golf_meta(path.read_bytes()):
                    if self._resume_golf(path):
                        resumed.append(path.stem)
                    continue
            try:
                meta = load_meta(path)
            except ReplayError as exc:
                log.error("bad_match_file", path=path.name, error=str(exc))
                continue
            deck = self.decks.get(meta.deck)
            if deck is None:
                log.error("resume_unknown_deck", match_id=meta.match_id, deck=meta.deck)
                continue
            hosted = self._host(meta, deck)
            replay_path = hosted.replay_path
            if replay_path.exists():
                try:
                    replay = read_replay(replay_path)
                except ReplayError as exc:
                    # The hosted match keeps the journal aside and ends with a clean one.
                    log.error("bad_replay", match_id=meta.match_id, error=str(exc))
                    replay = None
                if replay is not None and replay.result is not None:
                    hosted.status = "finished"
                    hosted.result = replay.result
                    continue
            hosted.start()
            resumed.append(meta.match_id)
        if resumed:
            log.info("matches_resumed", count=len(resumed))
        return resumed

    async def close(self) -> None:
        tasks = [h.task for h in self.matches.values() if h.task and not h.task.done()]
        for t in tasks:
            t.cancel()
        await asyncio.gather(*tasks, return_exceptions=True)


class _MetaId(msgspec.Struct):
    match_id: str


def _meta_id_problem(path: Path) -> str:
    """Why a metadata file cannot be resumed by its id, or '': the id becomes file names."""
    try:
        match_id = msgspec.json.decode(path.read_bytes(), type=_MetaId).match_id
    except (OSError, msgspec.DecodeError) as exc:
        return f"{path.name}: {exc}"
    if not is_match_id(match_id) or match_id != path.stem:
        return f"{path.name}: match_id {match_id[:100]!r} does not name this file"
    return ""
