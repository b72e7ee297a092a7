"""Cogolf as a live game: two seats, a seeded draw of holes from a deck.

How `POST /matches` with `game: cogolf` becomes a hosted match, and how a
persisted one is hosted again; the hosted match itself is `hosted.HostedMatch`.
"""

from __future__ import annotations

import secrets
import time
from pathlib import Path
from typing import Any

import msgspec
import structlog

from cogolf import messages as m
from cogolf.engine import rules
from cogolf.engine.match import MatchConfig
from cogolf.game import Host
from cogolf.games.cogolf.hosted import HostedMatch, MatchMeta, load_meta
from cogolf.replay import ReplayError, read_replay
from cogolf.server.meta import token_hash
from cogolf.server.requests import (
    MAX_MATCH_DEADLINE,
    MAX_NAME_CHARS,
    CreateMatch,
    RequestError,
    check_deadline,
    check_hash_seed,
    check_tokens,
)
from cogolf.text import clip

log = structlog.get_logger("cogolf.server")


class CogolfGame:
    name = "cogolf"
    seats = 2

    def schemas(self) -> dict[str, Any]:
        return {
            "seat_to_server": msgspec.json.schema(m.Submission),
            "server_to_seat": msgspec.json.schema(m.ServerToSeat),
            "server_to_spectator": msgspec.json.schema(m.ServerToWatcher),
            "replay_record": msgspec.json.schema(m.ReplayRecord),
        }

    def create(
        self, req: CreateMatch, host: Host, match_id: str
    ) -> tuple[HostedMatch, list[str]]:
        if req.course is not None:
            raise RequestError("course: only golf matches have a course")
        if not host.decks:
            raise RequestError("game: this server hosts golf matches only (no Cogolf deck)")
        deck_name = req.deck or next(iter(host.decks))
        deck = host.decks.get(deck_name)
        if deck is None:
            raise RequestError(f"deck: unknown pack {deck_name!r}; known: {sorted(host.decks)}")
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
        log.info("match_created", match_id=match_id, deck=deck_name, holes=holes)
        return _host(meta, host), tokens

    def resume(self, path: Path, host: Host) -> HostedMatch | None:
        try:
            meta = load_meta(path)
        except ReplayError as exc:
            log.error("bad_match_file", path=path.name, error=str(exc))
            return None
        if meta.deck not in host.decks:
            log.error("resume_unknown_deck", match_id=meta.match_id, deck=meta.deck)
            return None
        hosted = _host(meta, host)
        if hosted.replay_path.exists():
            try:
                replay = read_replay(hosted.replay_path)
            except ReplayError as exc:
                # The hosted match keeps the journal aside and ends with a clean one.
                log.error("bad_replay", match_id=meta.match_id, error=str(exc))
                replay = None
            if replay is not None and replay.result is not None:
                hosted.status = "finished"
                hosted.result = replay.result
        return hosted


def _host(meta: MatchMeta, host: Host) -> HostedMatch:
    return HostedMatch(
        meta,
        host.decks[meta.deck],
        host.sandbox,
        host.replays_dir,
        host.meta_dir,
        connect_timeout=host.connect_timeout,
    )


GAME = CogolfGame()
