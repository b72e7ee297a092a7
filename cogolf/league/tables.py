"""Every night game's table in the standings, made and printed by the game itself.

What the night plays of each game (items, attempts, entrants) comes from the
manifest; without one it is inferred from the files. A result for an entrant,
course or task the night does not have is a problem, not a row. The league
knows no game here: each table is `NightGame.table`, each text `NightGame.render`.
"""

from __future__ import annotations

from typing import Any

from cogolf.game import GameTable, NightSetup
from cogolf.games.registry import NIGHT
from cogolf.league.records import Manifest
from cogolf.league.results import JobVoid, ResultRecords


def setups(manifest: Manifest | None, records: ResultRecords) -> dict[str, NightSetup]:
    """What the night plays of each of its file games, by game name."""
    if manifest is not None:
        if manifest.solo is None:
            return {}  # a night run without such games: any result file does not belong
        entrants = frozenset(e.name for e in manifest.entrants)
        return {name: NightSetup(tuple(items), attempts, entrants)
                for name, (items, attempts) in manifest.solo.games().items()
                if name in NIGHT and items}
    return {name: game.default_setup(records.of(name))
            for name, game in NIGHT.items() if records.of(name)}


def _void_docs(void: list[JobVoid], game: str) -> list[dict[str, Any]]:
    rows = [
        {"entrant": v.entrant, "item": v.item, "attempt": v.attempt, "cause": v.cause}
        for v in void
        if v.game == game
    ]
    return sorted(rows, key=lambda r: (r["entrant"], r["item"], r["attempt"]))


def game_tables(
    records: ResultRecords, manifest: Manifest | None, problems: list[str]
) -> dict[str, GameTable]:
    """The tables of the file games the night plays, by game name, in the registry's order."""
    played = setups(manifest, records)
    out = {
        name: NIGHT[name].table(records.of(name), setup, _void_docs(records.void, name), problems)
        for name, setup in played.items()
    }
    for v in records.void:
        if v.game not in played:
            problems.append(f"{v.game}/void/{v.entrant}.{v.item}: the night has no {v.game} game")
    for name in NIGHT:
        if records.of(name) and name not in played:
            problems.append(f"{name}/: {len(records.of(name))} result file(s), but the night "
                            f"has no {name} game")
    return out


def render_games(doc: dict[str, Any]) -> list[str]:
    """The file games' tables as text, from the standings document."""
    out: list[str] = []
    for name, game in NIGHT.items():
        if name in doc["games"]:
            out += game.render(doc["games"][name])
    return out
