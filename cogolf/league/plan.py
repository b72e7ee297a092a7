"""What a night's games scored from files will play: each game's plan and one job per result.

Built before the first match, so a task that does not load, a missing
submissions folder or a toolchain the machine lacks is reported against its
line in the night file instead of surfacing hours later. A job is one result
file: an entrant's submission for one item (course, task) of a game, or one
attempt of it. Jobs exist only for entrants that gave a path for that game.
"""

from __future__ import annotations

from dataclasses import dataclass

from cogolf import safeio
from cogolf.game import GamePlan, NightJob, SectionError
from cogolf.league.night import AGENT_GAMES, Night
from cogolf.league.nightfields import Problems
from cogolf.league.sections import night_game


@dataclass(frozen=True)
class NightPlan:
    games: dict[str, GamePlan]  # by game name, in the registry's order
    jobs: tuple[NightJob, ...]


def night_plan(
    night: Night, *, check_toolchains: bool = True, problems: Problems | None = None
) -> NightPlan:
    """Load every night game's tasks and list its jobs; errors name the night file's field.

    With `problems`, every problem is added there (a section that could not be parsed,
    None in `night.sections`, is skipped) and the plan holds what could be planned."""
    found = problems if problems is not None else Problems(night.path)
    plans: dict[str, GamePlan] = {}
    for name, settings in night.sections.items():
        if settings is None:
            continue
        try:
            plans[name] = night_game(name).plan(settings, check_toolchains=check_toolchains)
        except SectionError as exc:
            found.add(night.error((name, *exc.at), exc.problem))
    jobs: list[NightJob] = []
    for idx, e in enumerate(night.entrants):
        for name, plan in plans.items():
            game = night_game(name)
            attempts = range(1, plan.attempts + 1) if game.with_attempts else (0,)
            for item in plan.items:
                for attempt in attempts:
                    if e.agent is not None and name in AGENT_GAMES:
                        jobs.append(NightJob(name, e.name, item, attempt, None, e.agent))
                        continue
                    path = night.submission(e, name, **game.template_fields(item, attempt))
                    if path is None:
                        continue
                    try:  # a link anywhere the template leads is never followed
                        safeio.check_no_links(night.path.parent, path)
                    except safeio.UnsafeFile as exc:
                        found.add(night.error(("entrant", idx, name), f"{item}: {exc}"))
                        continue
                    if not (path.is_dir() or (game.patch_files and path.is_file())):
                        found.add(night.error(("entrant", idx, name),
                                              f"no submission for {item}: {path} does not exist"))
                        continue
                    jobs.append(NightJob(name, e.name, item, attempt, path))
    if problems is None:
        found.raise_any()
    return NightPlan(plans, tuple(jobs))
