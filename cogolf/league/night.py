"""The night file: one TOML document describing a league night.

Parsing is strict because a night can run for hours: a typo found after the
first hundred matches is expensive. Every problem becomes a `NightError` whose
message names the file, the line and the field (`entrant[2].policy`, counted
from 0 like every other path in the project). Checks that need the deck or
user code (does this policy load?) live in `cogolf.league.checks`.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogolf.agents.spec import AgentSpec, AgentSpecError, from_agent_table
from cogolf.bots.policy import builtin_names
from cogolf.deadlines import MAX_DEADLINE, MAX_MATCH_DEADLINE
from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES
from cogolf.engine import rules
from cogolf.league.nightfields import NightError, Problems, Reader, error, kind, resolve
from cogolf.league.sections import (
    night_games,
    parse_sections,
    submission_path,
    submission_template,
)
from cogolf.league.tomllines import Path as KeyPath
from cogolf.league.tomllines import key_lines
from cogolf.llm.config import LLMConfigError
from cogolf.llm.entrant import llm_policy

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")
MIN_ENTRANTS = 2
MAX_ENTRANTS = 64
MAX_PARALLEL = 256
MAX_SEED = 2**63 - 1
MAX_HOLES = 99
MAX_BUDGET = MAX_ENTRANTS * (MAX_ENTRANTS - 1)  # the round-robin's matches, most entrants
EXECUTORS = ("local", "ray")
# The round-robin plays every pairing; "adaptive" plays `budget` matches, pairings chosen
# as results come in by what they are expected to tell about the order (`adaptive.py`).
SCHEDULES = ("round-robin", "adaptive")
MIN_BUDGET = 2  # one pairing: both seat orders

TOP_LEVEL_FIELDS = (
    "name",
    "seed",
    "holes",
    "hole_deadline",
    "retry_deadline",
    "match_deadline",
    "deck",
    "references",
    "executor",
    "parallel",
    "address",
    "schedule",
    "budget",
    "entrant",
)
ENTRANT_FIELDS = ("name", "policy", "command", "llm", "workdir", "env", "agent")
# The night games an agent entrant plays itself, from a fresh workspace per attempt.
AGENT_GAMES = ("commit0", "project")
ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,63}$")
MAX_ENV = 64


@dataclass(frozen=True)
class Entrant:
    name: str
    policy: str | None  # a policy reference, `file.py` paths made absolute
    # argv of a bot process: `{url}` is the seat URL, `{python}` the interpreter policy bots run
    command: tuple[str, ...] | None
    line: int  # where its [[entrant]] table starts
    # A bot's working folder (default: the night file's) and environment additions.
    workdir: Path | None = None
    env: dict[str, str] = field(default_factory=dict)
    # Path templates of its submissions to the night games, by game, relative to the night file.
    submissions: dict[str, str] = field(default_factory=dict)
    # A coding agent that plays the night's Commit-0 and project tasks itself.
    agent: AgentSpec | None = None

    @property
    def plays_cogolf(self) -> bool:
        """An entrant with an agent and no policy plays only the offline games."""
        return self.policy is not None or self.command is not None

    def template(self, game: str) -> str | None:
        return self.submissions.get(game)


@dataclass(frozen=True)
class Night:
    path: Path
    name: str
    seed: int
    holes: int
    hole_deadline: float
    retry_deadline: float
    match_deadline: float
    deck: Path
    references: Path
    entrants: tuple[Entrant, ...]
    executor: str
    parallel: int
    address: str | None
    lines: dict[KeyPath, int]  # where each field was written, for later errors
    # The settings of each night game the file has a section for, by game name.
    sections: dict[str, Any] = field(default_factory=dict)
    schedule: str = "round-robin"
    budget: int | None = None  # matches an adaptive schedule plays at most

    def error(self, path: KeyPath, problem: str) -> NightError:
        return error(self.path, self.lines, path, problem)

    def workdir(self, entrant: Entrant) -> Path:
        """Where a bot process runs: the only files beyond the system it may read."""
        return entrant.workdir or self.path.parent.resolve()

    def submission(self, entrant: Entrant, game: str, **fields: str | int) -> Path | None:
        """Where `entrant` keeps its submission for one course, task or attempt of `game`."""
        template = entrant.template(game)
        if template is None:
            return None
        return submission_path(self.path.parent, template, **fields)


def default_parallel() -> int:
    """Matches at once when the night file does not say: one per core. The night's
    matches share one server whose sandbox queue runs 2 batches per core; a match keeps
    about two batches going while it resolves a hole, so one match per core keeps the
    queue fed, and more only oversubscribes the cores (`cogolf bench league --parallel`
    measured 2 and 4 per core no faster than 1 on a busy 2-core machine)."""
    return os.cpu_count() or 1


def _policy_ref(reader: Reader, base: Path, ref: str) -> str:
    """Check the shape of a policy reference and anchor `file.py` paths at the night file."""
    if ref in builtin_names():
        return ref
    target, sep, attr = ref.rpartition(":")
    if not sep or not target or not attr.isidentifier():
        raise reader.fail(
            "policy",
            f"{ref!r} is not a policy: expected one of {', '.join(builtin_names())}, "
            "'path/to/file.py:name' or 'module:name'",
        )
    if target.endswith(".py"):
        path = resolve(base, target)
        if not path.is_file():
            raise reader.fail("policy", f"no file {target} (looked for {path})")
        return f"{path.resolve()}:{attr}"
    if not all(part.isidentifier() for part in target.split(".")):
        raise reader.fail("policy", f"{target!r} is not a module name")
    return ref


def _command(reader: Reader, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise reader.fail("command", f"cannot split into arguments: {exc}") from None
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        argv = list(value)
    else:
        raise reader.fail("command", f"must be a string or an array of strings, got {kind(value)}")
    if not argv or not argv[0]:
        raise reader.fail("command", "is empty")
    return tuple(argv)


def _env(reader: Reader, value: Any) -> dict[str, str]:
    if not isinstance(value, dict):
        raise reader.fail("env", f"must be a table of strings, got {kind(value)}")
    if len(value) > MAX_ENV:
        raise reader.fail("env", f"at most {MAX_ENV} variables, got {len(value)}")
    for key, item in value.items():
        if not ENV_NAME.match(key):
            raise reader.fail("env", f"{key!r} is not a variable name")
        if key == "COGOLF_URL":
            raise reader.fail("env", "COGOLF_URL is set by the night")
        if not isinstance(item, str) or "\0" in item:
            raise reader.fail("env", f"{key}: must be a string without NUL, got {kind(item)}")
    return dict(value)


def _name(r: Reader) -> str:
    name = r.string("name", required=True)
    assert name is not None
    if not NAME_PATTERN.match(name):
        raise r.fail(
            "name",
            f"{name!r}: use 1-48 letters, digits, '_', '-' or '.', starting with a letter or digit",
        )
    return name


def _llm(r: Reader, value: Any, base: Path) -> str:
    try:
        return llm_policy(value, base)
    except LLMConfigError as exc:
        raise r.fail("llm", str(exc)) from None


def _agent(r: Reader, value: Any, base: Path, name: str, sections: dict[str, Any]) -> AgentSpec:
    if not isinstance(value, dict):
        raise r.fail("agent", "must be a table: agent = { llm = \"models/x.toml\", ... }")
    games = [g for g in AGENT_GAMES if g in sections]
    if not games and "golf" not in sections:
        raise r.fail("agent", "the night has no [commit0], [project] or [golf] section for "
                     "it to play")
    both = [g for g in games if g in r.table]
    if both:
        raise r.fail(both[0], "an agent entrant plays its tasks itself: give no path for "
                     f"{both[0]}")
    try:
        return from_agent_table(value, base, default_name=name or "agent")
    except AgentSpecError as exc:
        raise r.fail("agent", str(exc)) from None


def _entrant(
    file: Path,
    lines: dict[KeyPath, int],
    base: Path,
    idx: int,
    table: Any,
    sections: dict[str, Any],
    problems: Problems,
) -> Entrant | None:
    """The entrant at `idx`; its problems go to `problems` (None when it is no table)."""
    at: KeyPath = ("entrant", idx)
    if not isinstance(table, dict):
        problems.add(error(file, lines, at, "must be a table ([[entrant]])"))
        return None
    r = Reader(file, lines, table, at)
    with problems.check():
        r.check_known((*ENTRANT_FIELDS, *night_games()))
    name = problems.value(lambda: _name(r), "")
    policy = command = None
    players = sum(key in table for key in ("policy", "command", "llm"))
    if players > 1 or (players == 0 and "agent" not in table):
        problems.add(
            r.fail(None, "give exactly one of 'policy' or 'command' (or 'llm', a chat model), "
                   "or only an 'agent' for the offline games")
        )
    elif players == 0:
        pass
    elif "llm" in table:
        if "env" in table:
            # It would be ignored, and it is where a key would be written by mistake.
            problems.add(r.fail(
                "env",
                "an llm entrant reads its key from the environment the night runs in "
                "(its config's api_key_env); env is for walled bots",
            ))  # fmt: skip
        policy = problems.value(lambda: _llm(r, table["llm"], base), None)
    elif "policy" in table:
        ref = problems.value(lambda: r.string("policy"), None)
        if ref is not None:
            policy = problems.value(lambda: _policy_ref(r, base, ref), None)
    else:
        command = problems.value(lambda: _command(r, table["command"]), None)
    workdir = None
    if "workdir" in table:
        workdir = problems.value(lambda: resolve(base, r.string("workdir") or ".").resolve(), None)
    env = problems.value(lambda: _env(r, table["env"]), {}) if "env" in table else {}
    agent = problems.value(lambda: _agent(r, table["agent"], base, name, sections),
                           None) if "agent" in table else None
    return Entrant(
        agent=agent,
        name=name,
        policy=policy,
        command=command,
        line=lines.get(at, 0),
        submissions={
            game: text
            for game in night_games()
            if (text := problems.value(
                lambda game=game: submission_template(r, game, sections), None
            )) is not None
        },
        workdir=workdir,
        env=env,
    )


def parse_night(path: Path, text: str | None = None, *, problems: Problems | None = None) -> Night:
    """Read and validate a night file. `text` overrides reading `path` (for tests).

    Every problem of the file's fields is reported at once, in line order (a file
    that is not TOML at all stops at its first syntax error). With `problems`, they
    are added there instead of raised, and the night returned holds stand-ins for
    what could not be read (`league check` then goes on to check the rest)."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise NightError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise NightError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise NightError(f"{path}: not valid TOML: {exc}") from None
    lines = key_lines(text)
    base = path.parent
    raising = problems is None
    problems = Problems(path) if problems is None else problems
    r = Reader(path, lines, doc, ())
    with problems.check():
        r.check_known((*TOP_LEVEL_FIELDS, *night_games()))
    name = problems.value(lambda: _name(r), "")
    if "seed" not in doc:
        problems.add(r.fail(None, "missing required field 'seed'"))
    seed = problems.value(lambda: r.integer("seed", 0, 0, MAX_SEED), 0)
    holes = problems.value(lambda: r.integer("holes", rules.DEFAULT_HOLES, 1, MAX_HOLES), 1)
    # The server's bounds: a deadline the night accepts is one every match accepts.
    hole_deadline = problems.value(
        lambda: r.deadline("hole_deadline", rules.HOLE_DEADLINE_SECONDS, MAX_DEADLINE), 1.0
    )
    retry_deadline = problems.value(
        lambda: r.deadline("retry_deadline", rules.RETRY_DEADLINE_SECONDS, MAX_DEADLINE), 1.0
    )
    match_deadline = problems.value(
        lambda: r.deadline("match_deadline", 1800.0, MAX_MATCH_DEADLINE), 1.0
    )
    deck_text = problems.value(lambda: r.string("deck"), None)
    refs_text = problems.value(lambda: r.string("references"), None)
    deck = resolve(base, deck_text) if deck_text is not None else DEFAULT_DECK
    references = resolve(base, refs_text) if refs_text is not None else DEFAULT_REFERENCES
    if deck_text is not None and refs_text is None and "references" not in doc:
        problems.add(
            r.fail("deck", "a custom deck needs 'references' (the hidden half of the pack) too")
        )
    for key, where in (("deck", deck), ("references", references)):
        if not where.is_dir():
            problems.add(r.fail(key, f"no directory {where}"))

    executor = problems.value(lambda: r.string("executor", "local"), "local")
    assert executor is not None
    if executor not in EXECUTORS:
        problems.add(r.fail("executor", f"{executor!r}: expected one of {', '.join(EXECUTORS)}"))
    parallel = problems.value(lambda: r.integer("parallel", default_parallel(), 1, MAX_PARALLEL), 1)
    address = problems.value(lambda: r.string("address"), None)
    if address is not None and executor != "ray":
        problems.add(r.fail("address", 'only used with executor = "ray"'))

    sections = parse_sections(path, lines, doc, problems)
    schedule = problems.value(lambda: r.string("schedule", "round-robin"), "round-robin")
    assert schedule is not None
    if schedule not in SCHEDULES:
        problems.add(r.fail("schedule", f"{schedule!r}: expected one of {', '.join(SCHEDULES)}"))
    budget = problems.value(lambda: r.integer("budget", 0, MIN_BUDGET, MAX_BUDGET), 0) or None
    if schedule == "adaptive" and budget is None and "budget" not in doc:
        problems.add(r.fail(None, 'schedule = "adaptive" needs a match budget: budget = N'))
    if budget is not None and schedule != "adaptive":
        problems.add(r.fail("budget", 'only used with schedule = "adaptive"'))
    if budget is not None and budget % 2:
        problems.add(
            r.fail("budget", f"must be even (a pairing plays both seat orders), got {budget}")
        )
    raw = doc.get("entrant")
    if raw is None:
        problems.add(r.fail(None, f"no entrants: add at least {MIN_ENTRANTS} [[entrant]] tables"))
        raw = []
    elif not isinstance(raw, list):
        problems.add(r.fail("entrant", "must be an array of tables ([[entrant]])"))
        raw = []
    elif not MIN_ENTRANTS <= len(raw) <= MAX_ENTRANTS:
        problems.add(
            r.fail(
                "entrant",
                f"a night needs {MIN_ENTRANTS} to {MAX_ENTRANTS} entrants, got {len(raw)}",
            )
        )
    entrants: list[Entrant] = []
    seen: dict[str, int] = {}
    for idx, table in enumerate(raw):
        e = _entrant(path, lines, base, idx, table, sections, problems)
        if e is None:
            continue
        if e.name and e.name in seen:
            problems.add(
                error(
                    path,
                    lines,
                    ("entrant", idx, "name"),
                    f"{e.name!r} is already the name of entrant[{seen[e.name]}]",
                )
            )
        seen.setdefault(e.name, idx)
        entrants.append(e)
    players = sum(1 for e in entrants if e.plays_cogolf)
    if budget is not None and players > 1 and budget > players * (players - 1):
        problems.add(
            r.fail(
                "budget",
                f"at most {players * (players - 1)} (the round-robin's matches for {players} "
                f"entrants), got {budget}",
            )
        )
    if raising:
        problems.raise_any()
    return Night(
        path=path,
        name=name,
        seed=seed,
        holes=holes,
        hole_deadline=hole_deadline,
        retry_deadline=retry_deadline,
        match_deadline=match_deadline,
        deck=deck,
        references=references,
        entrants=tuple(entrants),
        executor=executor,
        parallel=parallel,
        address=address,
        lines=lines,
        sections=sections,
        schedule=schedule,
        budget=budget,
    )
