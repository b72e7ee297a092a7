"""Every game the platform hosts: the one place that imports a game's package.

Adding a game is one folder under `cogolf/games/` and one line here. The server,
the league and the commands find a game by name through this module.
"""

from __future__ import annotations

from cogolf.game import LiveGame
from cogolf.games.cogolf.game import GAME as COGOLF
from cogolf.games.golf.game import GAME as GOLF

LIVE: dict[str, LiveGame] = {g.name: g for g in (COGOLF, GOLF)}


def live_game(name: str) -> LiveGame | None:
    return LIVE.get(name)
