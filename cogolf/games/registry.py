"""Every game the platform hosts: the one place that imports a game's package.

Adding a game is one folder under `cogolf/games/` and one line here. The server,
the league and the commands find a game by name through this module.
"""

from __future__ import annotations

from cogolf.game import LiveGame, OfflineGame
from cogolf.games.cogolf.game import GAME as COGOLF
from cogolf.games.commit0.game import GAME as COMMIT0
from cogolf.games.golf.game import GAME as GOLF
from cogolf.games.project.game import GAME as PROJECT

LIVE: dict[str, LiveGame] = {g.name: g for g in (COGOLF, GOLF)}
OFFLINE: dict[str, OfflineGame] = {g.name: g for g in (COMMIT0, PROJECT)}


def live_game(name: str) -> LiveGame | None:
    return LIVE.get(name)


def offline_game(name: str) -> OfflineGame | None:
    return OFFLINE.get(name)
