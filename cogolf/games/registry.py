"""Every game the platform hosts: the one place that imports a game's package.

Adding a game is one folder under `cogolf/games/` and one line here. The server,
the league and the commands find a game by name through this module.
"""

from __future__ import annotations

from cogolf.game import LiveGame, NightGame, OfflineGame
from cogolf.games.cogolf.game import GAME as COGOLF
from cogolf.games.commit0.game import GAME as COMMIT0
from cogolf.games.commit0.night import GAME as COMMIT0_NIGHT
from cogolf.games.golf.game import GAME as GOLF
from cogolf.games.golf.night import GAME as GOLF_NIGHT
from cogolf.games.project.game import GAME as PROJECT
from cogolf.games.project.night import GAME as PROJECT_NIGHT

LIVE: dict[str, LiveGame] = {g.name: g for g in (COGOLF, GOLF)}
OFFLINE: dict[str, OfflineGame] = {g.name: g for g in (COMMIT0, PROJECT)}
# The games a league night scores from submitted files, in the order of its tables.
NIGHT: dict[str, NightGame] = {g.name: g for g in (GOLF_NIGHT, COMMIT0_NIGHT, PROJECT_NIGHT)}


def live_game(name: str) -> LiveGame | None:
    return LIVE.get(name)


def offline_game(name: str) -> OfflineGame | None:
    return OFFLINE.get(name)
