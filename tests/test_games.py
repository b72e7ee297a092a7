"""The game interface and registry: every game keeps its promises to the platform."""

from __future__ import annotations

import asyncio
import json

import httpx

from cogolf.commands.schema import schemas
from cogolf.game import LiveGame, OfflineGame
from cogolf.games.registry import LIVE, OFFLINE
from tests.server.helpers import running_server


def test_every_registered_game_satisfies_its_interface() -> None:
    assert set(LIVE) == {"cogolf", "golf"} and set(OFFLINE) == {"commit0", "project"}
    for name, game in LIVE.items():
        assert isinstance(game, LiveGame) and game.name == name
        assert game.seats == (2 if name == "cogolf" else 1)
        assert {"seat_to_server", "server_to_seat", "replay_record"} <= set(game.schemas())
    for name, offline in OFFLINE.items():
        assert isinstance(offline, OfflineGame) and offline.name == name


def test_schema_keeps_its_shape() -> None:
    doc = schemas()
    assert doc["seat_to_server"] == LIVE["cogolf"].schemas()["seat_to_server"]
    assert doc["golf"] == LIVE["golf"].schemas()


def test_offline_games_read_only_their_own_result_files(tmp_path) -> None:
    (tmp_path / "other.json").write_text(json.dumps({"game": "golf", "whatever": 1}))
    for offline in OFFLINE.values():
        assert offline.table(offline.load_results(tmp_path)) == []
    (tmp_path / "broken.json").write_text("{not json")
    for offline in OFFLINE.values():
        try:
            offline.load_results(tmp_path)
        except ValueError as exc:
            assert "broken.json" in str(exc) and "cannot read as JSON" in str(exc)
        else:
            raise AssertionError(f"{offline.name} read a file that is not JSON")


def test_unknown_game_is_refused_and_unknown_metadata_skipped(tmp_path) -> None:
    """A request for a game the server does not host gets a clear error; a metadata file
    naming such a game is skipped at start, and the server still hosts the others."""
    meta = tmp_path / "matches"
    meta.mkdir()
    (meta / "chess1.json").write_text(json.dumps({"match_id": "chess1", "game": "chess"}))

    async def scenario() -> None:
        async with running_server(tmp_path) as server:
            assert server.registry.get("chess1") is None
            async with httpx.AsyncClient(base_url=server.url) as client:
                refused = await client.post("/matches", json={"game": "chess"})
                assert refused.status_code == 400
                assert "unknown game 'chess'; choose cogolf or golf" in refused.text
                made = await client.post("/matches", json={"holes": 1, "seed": 3})
                assert made.status_code in (200, 201), made.text
            assert not (meta / "chess.json").exists()

    asyncio.run(scenario())
