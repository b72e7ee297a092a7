"""The server's matches: creating them from requests, finding them, resuming them.

All state lives under the data directory, so a server killed at any moment and
started again on the same directory finds every match it had. A request's `game`
names the live game (`cogolf.games.registry`) that validates it and builds the
hosted match; every game's matches are served behind the same endpoints.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import structlog

from cogolf.deck import Deck
from cogolf.game import HostedGame, LiveGame, meta_game
from cogolf.matchid import MatchIdError, check_match_id, is_match_id, new_match_id
from cogolf.sandbox.api import Sandbox
from cogolf.server.requests import (  # re-exported: the request is part of this API
    MAX_NAME_CHARS,
    CreateMatch,
    RequestError,
    check_deadline,
)

__all__ = ["MAX_NAME_CHARS", "CreateMatch", "Registry", "RequestError", "check_deadline"]

log = structlog.get_logger("cogolf.server")


@dataclass
class Registry:
    replays_dir: Path  # <match_id>.ndjson journals
    meta_dir: Path  # <match_id>.json configuration and token hashes
    decks: dict[str, Deck]  # by pack name; the first is the default
    sandbox: Sandbox
    connect_timeout: float = 30.0
    # The live games hosted, by name (the caller passes `cogolf.games.registry.LIVE`,
    # so the server never imports a game), and their settings by the same names.
    games: Mapping[str, LiveGame] = field(default_factory=dict)
    settings: dict[str, Any] = field(default_factory=dict)
    matches: dict[str, HostedGame] = field(default_factory=dict)

    @property
    def default_deck(self) -> str:
        return next(iter(self.decks))

    def get(self, match_id: str) -> HostedGame | None:
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

    def create(self, req: CreateMatch) -> tuple[HostedGame, list[str]]:
        game = self.games.get(req.game)
        if game is None:
            known = " or ".join(self.games)
            raise RequestError(f"game: unknown game {req.game!r}; choose {known}")
        match_id = self._new_match_id(req.match_id)
        try:
            hosted, tokens = game.create(req, self, match_id)
        except Exception:
            (self.meta_dir / f"{match_id}.json").unlink(missing_ok=True)  # free the claim
            raise
        self.matches[hosted.match_id] = hosted
        hosted.save_meta()
        hosted.start()
        return hosted, tokens

    def release(self, match_id: str) -> None:
        """Forget a match that is over (finished or cancelled) and free its id's claim, so a
        long-lived server does not keep every match in memory and the id may be played
        again (a league night's retry). Its journal stays where it is."""
        hosted = self.matches.pop(match_id, None)
        if hosted is not None and hosted.task is not None and not hosted.task.done():
            hosted.task.cancel()
        (self.meta_dir / f"{match_id}.json").unlink(missing_ok=True)

    def resume_all(self) -> list[str]:
        """Host again every persisted match; start the unfinished ones. Returns their ids."""
        resumed = []
        for path in sorted(self.meta_dir.glob("*.json")):
            problem = _meta_id_problem(path)
            if problem:
                log.error("bad_match_file", path=path.name, error=problem)
                continue
            try:
                game = self.games.get(meta_game(path.read_bytes()))
            except OSError as exc:
                log.error("bad_match_file", path=path.name, error=str(exc))
                continue
            if game is None:
                log.error("bad_match_file", path=path.name, error="unknown game")
                continue
            hosted = game.resume(path, self)
            if hosted is None:
                continue
            self.matches[hosted.match_id] = hosted
            if hosted.status == "finished":
                continue
            hosted.start()
            resumed.append(hosted.match_id)
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
