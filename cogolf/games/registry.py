"""Every game the platform hosts: the one place that imports a game's package.

Adding a game is one folder under `cogolf/games/` and one line here. The server,
the league and the commands find a game by name through this module.
"""

from __future__ import annotations

from pathlib import Path

from cogolf.game import AgentTask, LiveGame, NightGame, OfflineGame
from cogolf.games.cogolf.game import GAME as COGOLF
from cogolf.games.commit0 import agent as commit0_agent
from cogolf.games.commit0.game import GAME as COMMIT0
from cogolf.games.commit0.night import GAME as COMMIT0_NIGHT
from cogolf.games.golf.game import GAME as GOLF
from cogolf.games.golf.night import GAME as GOLF_NIGHT
from cogolf.games.project import agent as project_agent
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


AGENT_GAMES = ("project", "commit0")
FEEDBACK = commit0_agent.FEEDBACK


class AgentTaskError(ValueError):
    """A task folder an agent cannot play; the message names it and why."""


def agent_task(path: Path, *, feedback: str = "lint", quality: bool = True) -> AgentTask:
    """The task at `path` as an agent plays it: a Commit-0 task (its task.json says
    `"game": "commit0"`) or a project task. `feedback` is Commit-0's."""
    import json

    try:
        doc = json.loads((path / "task.json").read_text(encoding="utf-8"))
    except FileNotFoundError:
        raise AgentTaskError(f"{path}: no task.json (a project task, or a Commit-0 task "
                             "made by `cogolf commit0 prepare`)") from None
    except (OSError, ValueError) as exc:
        raise AgentTaskError(f"{path}/task.json: cannot read as JSON: {exc}") from None
    try:
        if isinstance(doc, dict) and doc.get("game") == "commit0":
            return commit0_agent.agent_task(path, feedback, quality)
        return project_agent.agent_task(path)
    except ValueError as exc:  # each game's TaskError
        raise AgentTaskError(str(exc)) from None
