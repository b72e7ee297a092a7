"""The night games' sections of a night file (`[golf]`, `[commit0]`, `[project]`, ...).

A night can fold the games scored from files in beside its Cogolf matches. Each
game's section says what is played (courses, tasks, attempts); each entrant
says where its submissions live with a path template per game, relative to the
night file:

    [golf]
    courses = ["python", "racket"]
    [project]
    tasks = ["../references/projects/csv_importer"]
    [[entrant]]
    golf = "subs/alice/golf/{course}/"
    project = "subs/alice/project/{task}/{attempt}/"

The league knows no game here: each section is read by its game
(`NightGame.parse_section`) from the registry. Only the shape is checked; whether
the folders exist and the tasks load is checked by `cogolf.league.plan`.
"""

from __future__ import annotations

import difflib
import string
from pathlib import Path
from typing import Any

from cogolf.game import NightGame, SectionError, SectionProblems
from cogolf.games.registry import NIGHT
from cogolf.league.nightfields import NightError, Problems, Reader, error
from cogolf.league.tomllines import Path as KeyPath
from cogolf.nightfiles import resolve

GUESS = 0.8  # how close a misspelt field must be to a known one to be named as meant


def night_games() -> tuple[str, ...]:
    """The games a night file may have a section for, in the order of their tables."""
    return tuple(NIGHT)


def night_game(name: str) -> NightGame:
    return NIGHT[name]


def parse_sections(
    file: Path, lines: dict[KeyPath, int], doc: dict[str, Any], problems: Problems | None = None
) -> dict[str, Any]:
    """Each night game's settings, by name, for the sections the file has. A section's
    first problem goes to `problems` (raised at once without one) and the others go on."""
    found = problems if problems is not None else Problems(file)
    out: dict[str, Any] = {}
    for name, game in NIGHT.items():
        if name not in doc:
            continue
        table = doc[name]
        if not isinstance(table, dict):
            found.add(error(file, lines, (name,), f"must be a table ([{name}])"))
            continue
        r = Reader(file, lines, table, (name,))
        # The section is there even when it cannot be read: an entrant's path for this
        # game is then not also "no [game] section" (None: its settings are unknown).
        out[name] = None
        unknown = [key for key in table if key not in game.fields]
        guesses = {
            g for key in unknown for g in difflib.get_close_matches(key, game.fields, 1, GUESS)
        }
        with found.check():
            r.check_known(game.fields)
        try:
            out[name] = game.parse_section(r, file.parent)
        except SectionError as exc:
            found.add(error(file, lines, (name, *exc.at), exc.problem))
        except SectionProblems as exc:
            for each in exc.each:
                found.add(error(file, lines, (name, *each.at), each.problem))
        except NightError as exc:
            # A misspelt required field is said once, as the unknown field it is.
            if not any(str(exc).endswith(f"missing required field {g!r}") for g in guesses):
                found.add(exc)
    if problems is None:
        found.raise_any()
    return out


def submission_template(r: Reader, game: str, sections: dict[str, Any]) -> str | None:
    """An entrant's path template for `game`, its placeholders checked."""
    text = r.string(game)
    if text is None:
        return None
    if game not in sections:
        raise r.fail(game, f"the night has no [{game}] section")
    allowed = NIGHT[game].placeholders
    try:
        fields = [f for _, f, _, _ in string.Formatter().parse(text) if f is not None]
    except ValueError as exc:
        raise r.fail(game, f"{text!r}: {exc} (write a literal brace as {{{{ or }}}})") from None
    names = ", ".join("{" + a + "}" for a in allowed)
    for f in fields:
        if f not in allowed:
            raise r.fail(game, f"unknown placeholder {{{f}}} (allowed: {names})")
    if not text.strip():
        raise r.fail(game, "is empty")
    return text


def submission_path(base: Path, template: str, **fields: str | int) -> Path:
    return resolve(base, template.format(**fields))
