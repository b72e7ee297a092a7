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
- an *offline* game (Commit-0, project attempts, and golf's file submissions)
  scores a submission into a result document the league collects and tabulates.

The hole collector (`cogolf.engine.collect`) is generic over seats, so a live
game's driver reuses it; the engine's rules stay pure.
"""

from __future__ import annotations

import asyncio
from collections.abc import Mapping
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


class _GameField(msgspec.Struct):
    game: str = "cogolf"


def meta_game(data: bytes) -> str:
    """The game named by a metadata file (Cogolf's files predate the field)."""
    try:
        return msgspec.json.decode(data, type=_GameField).game
    except (msgspec.DecodeError, msgspec.ValidationError):
        return "cogolf"
