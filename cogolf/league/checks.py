"""Checks of a parsed night that need the deck or user code.

Run before the first match so that a policy that does not import, or more holes
than the deck has, is reported against its line in the night file instead of
voiding a whole night of matches one by one.
"""

from __future__ import annotations

import importlib.util
import os

from cogolf.bots.policy import PolicyError, load_policy
from cogolf.deck import Deck, DeckError, load
from cogolf.league.botwall import BotSetupError, bot_python, import_path, readable_by_bots
from cogolf.league.night import Night
from cogolf.league.nightfields import Problems
from cogolf.league.plan import night_plan
from cogolf.llm.entrant import PREFIX as LLM_PREFIX


def load_night_deck(night: Night) -> Deck:
    try:
        deck = load(night.deck, night.references)
    except DeckError as exc:
        raise night.error(("deck",), f"cannot load the pack: {exc}") from None
    size = len(deck.spec_keys())
    if night.holes > size:
        raise night.error(("holes",), f"the deck {deck.name} has {size} specs, got {night.holes}")
    return deck


def check_entrant(night: Night, idx: int) -> None:
    """Load an entrant's policy once, naming the entrant when it cannot be loaded."""
    entrant = night.entrants[idx]
    if entrant.command is not None:
        return  # a bot process: it can only be judged by starting it
    assert entrant.policy is not None
    try:
        load_policy(entrant.policy, deck_dir=night.deck)
    except PolicyError as exc:
        key = "llm" if entrant.policy.startswith(LLM_PREFIX) else "policy"
        raise night.error(("entrant", idx, key), str(exc)) from None


def check_bot_files(night: Night, idx: int, packages: list[str]) -> None:
    """Bots run as unprivileged uids: what they need must be readable by any user."""
    entrant = night.entrants[idx]
    if entrant.command is not None:
        where, key = night.workdir(entrant), "workdir" if entrant.workdir else "command"
        if not where.is_dir() or not readable_by_bots(str(where)):
            raise night.error(("entrant", idx, key), f"the bot's working folder {where} "
                              "is not a folder every user can read (bots run unprivileged)")
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


def check_night(night: Night) -> Deck:
    """Everything `league run` needs before it starts; returns the loaded deck.
    Every problem found is reported at once, in line order."""
    problems = Problems(night.path)
    deck = problems.value(lambda: load_night_deck(night), None)
    packages = problems.value(lambda: _bot_packages(night), None)
    for idx in range(len(night.entrants)):
        with problems.check():
            check_entrant(night, idx)
        if packages is not None:
            with problems.check():
                check_bot_files(night, idx, packages)
    with problems.check():
        night_plan(night)  # tasks load, submissions exist, toolchains run
    problems.raise_any()
    assert deck is not None
    return deck
