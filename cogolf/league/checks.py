"""Checks of a parsed night that need the deck or user code.

Run before the first match so that a policy that does not import, or more holes
than the deck has, is reported against its line in the night file instead of
voiding a whole night of matches one by one.
"""

from __future__ import annotations

import importlib.util
import os
import re
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from cogolf.deck import Deck, DeckError, load
from cogolf.league.botwall import BotSetupError, bot_python, import_path, readable_by_bots
from cogolf.league.night import Night
from cogolf.league.nightfields import NightError, Problem, Problems
from cogolf.league.plan import night_plan
from cogolf.league.play import policy_problem
from cogolf.llm.entrant import PREFIX as LLM_PREFIX
from cogolf.sandbox.walls import SYSTEM_PATHS


def load_night_deck(night: Night) -> Deck:
    try:
        deck = load(night.deck, night.references)
    except DeckError as exc:
        raise night.error(("deck",), f"cannot load the pack: {exc}") from None
    size = len(deck.spec_keys())
    if night.holes > size:
        raise night.error(("holes",), f"the deck {deck.name} has {size} specs, got {night.holes}")
    return deck


def policy_problems(night: Night) -> dict[int, str | None]:
    """Each policy entrant's load, as its bot would load it (a file or module behind the
    bot's walls, never in this process): why it fails, or None. A few at once, as each
    walled load is a process or two of its own."""
    policies = [
        (i, e.policy)
        for i, e in enumerate(night.entrants)
        # a file no bot can read is said so by check_bot_files; no load would tell more
        if e.policy is not None and (".py:" not in e.policy
                                     or readable_by_bots(e.policy.rpartition(":")[0]))
    ]  # fmt: skip
    with ThreadPoolExecutor(max_workers=CHECKS_AT_ONCE) as pool:
        found = pool.map(lambda ref: policy_problem(ref, night.deck), [p for _, p in policies])
        return dict(zip([i for i, _ in policies], found, strict=True))


def check_entrant(night: Night, idx: int, problem: str | None) -> None:
    """Name the entrant whose policy could not be loaded (`problem`: why)."""
    entrant = night.entrants[idx]
    if problem is not None and entrant.policy is not None:
        key = "llm" if entrant.policy.startswith(LLM_PREFIX) else "policy"
        raise night.error(("entrant", idx, key), problem)


CHECKS_AT_ONCE = 4
PLACEHOLDER = re.compile(r"\{([A-Za-z_][A-Za-z0-9_]*)(\}?)")
COMMAND_PLACEHOLDERS = ("url", "python")
NOT_READABLE = (
    "bots run as an unprivileged user and read only the system, the packages and their "
    "working folder: move it into `workdir`"
)


def _command_problems(
    night: Night, idx: int, packages: list[str]
) -> tuple[list[NightError], list[NightError]]:
    """A command's placeholders (problems), and the files it names that its walled bot
    cannot read (warnings: the bot may only pass a path on, not read it)."""
    entrant = night.entrants[idx]
    assert entrant.command is not None
    at = ("entrant", idx, "command")
    out = []
    for arg in entrant.command:
        for found in PLACEHOLDER.finditer(arg):
            name, closed = found.group(1), found.group(2)
            if not closed:
                out.append(night.error(at, f"{arg!r}: the placeholder {{{name} is not closed "
                                       "(write {url} or {python})"))  # fmt: skip
            elif name not in COMMAND_PLACEHOLDERS:
                out.append(night.error(at, f"{arg!r}: unknown placeholder {{{name}}} "
                                       "(allowed: {url}, {python})"))  # fmt: skip
    warnings = []
    workdir = night.workdir(entrant)
    allowed = [workdir, Path(night.deck), *map(Path, packages), *map(Path, SYSTEM_PATHS)]
    for arg in entrant.command:
        for text in dict.fromkeys((arg, arg.partition("=")[2])):
            if not text or "{" in text or ("/" not in text and not (workdir / text).exists()):
                continue
            path = Path(os.path.realpath(workdir / text))
            if not path.exists():
                continue
            inside = any(path.is_relative_to(os.path.realpath(a)) for a in allowed)
            if not inside or not readable_by_bots(str(path)):
                why = NOT_READABLE if not inside else (
                    "not readable by every user (bots run as an unprivileged user)")
                warnings.append(night.error(at, f"{text}: {why}"))
    return out, warnings


def check_bot_files(night: Night, idx: int, packages: list[str], problems: Problems) -> None:
    """Bots run as unprivileged uids: what they need must be readable by any user."""
    entrant = night.entrants[idx]
    if entrant.command is not None:
        where, key = night.workdir(entrant), "workdir" if entrant.workdir else "command"
        if not where.is_dir() or not readable_by_bots(str(where)):
            raise night.error(("entrant", idx, key), f"the bot's working folder {where} "
                              "is not a folder every user can read (bots run unprivileged)")
        found, warnings = _command_problems(night, idx, packages)
        for warning in warnings:
            problems.warn(warning)
        if found:
            raise Problem(night.path, found)
    elif entrant.policy is not None and entrant.policy.startswith(LLM_PREFIX):
        return  # the platform's own player, run outside the wall (llm.entrant)
    elif entrant.policy is not None and ".py:" in entrant.policy:
        file = entrant.policy.rpartition(":")[0]
        if not readable_by_bots(file):
            raise night.error(("entrant", idx, "policy"), f"{file} is not readable by "
                              "every user (bots run unprivileged)")
    elif entrant.policy is not None and ":" in entrant.policy:
        top = entrant.policy.partition(":")[0].partition(".")[0]
        spec = importlib.util.find_spec(top)
        origin = os.path.realpath(spec.origin) if spec and spec.origin else ""
        if not any(origin.startswith(os.path.realpath(p) + os.sep) for p in packages):
            raise night.error(("entrant", idx, "policy"), f"module {top!r} is not in this "
                              "installation's packages, the only modules a bot can import "
                              "(use 'path/to/file.py:name')")


def _bot_packages(night: Night) -> list[str]:
    try:
        bot_python()
        return list(import_path())
    except BotSetupError as exc:
        raise night.error((), str(exc)) from None


def check_night(night: Night, problems: Problems | None = None) -> Deck | None:
    """Everything `league run` needs before it starts; returns the loaded deck.

    Every problem found is reported at once, in line order. With `problems` (those the
    parse found, its stand-in values in `night`), they are added there and not raised,
    and the deck is None when it could not be loaded."""
    found = problems if problems is not None else Problems(night.path)
    deck = None
    if night.deck.is_dir() and night.references.is_dir():  # else the parse said so
        deck = found.value(lambda: load_night_deck(night), None)
    packages = found.value(lambda: _bot_packages(night), None)
    loaded = policy_problems(night)
    for idx in range(len(night.entrants)):
        with found.check():
            check_entrant(night, idx, loaded.get(idx))
        if packages is not None:
            with found.check():
                check_bot_files(night, idx, packages, found)
    night_plan(night, problems=found)  # tasks load, submissions exist, toolchains run
    if problems is None:
        found.raise_any()
        assert deck is not None
    return deck
