"""Checks of a parsed night that need the deck or user code.

Run before the first match so that a policy that does not import, or more holes
than the deck has, is reported against its line in the night file instead of
voiding a whole night of matches one by one.
"""

from __future__ import annotations

from cogolf.bots.policy import PolicyError, load_policy
from cogolf.deck import Deck, DeckError, load
from cogolf.league.night import Night
from cogolf.league.solo_plan import solo_plan


def load_night_deck(night: Night) -> Deck:
    try:
        deck = load(night.deck, night.references)
    except DeckError as exc:
        raise night.error(("deck",), f"cannot load the pack: {exc}") from None
    size = len(deck.spec_keys())
    if night.holes > size:
        raise night.error(("holes",), f"the deck {deck.name} has {size} specs, got {night.holes}")
    return deck


def check_entrants(night: Night) -> None:
    """Load every policy once, naming the entrant whose policy cannot be loaded."""
    for idx, entrant in enumerate(night.entrants):
        if entrant.command is not None:
            continue  # a bot process: it can only be judged by starting it
        assert entrant.policy is not None
        try:
            load_policy(entrant.policy, deck_dir=night.deck)
        except PolicyError as exc:
            raise night.error(("entrant", idx, "policy"), str(exc)) from None


def check_night(night: Night) -> Deck:
    """Everything `league run` needs before it starts; returns the loaded deck."""
    deck = load_night_deck(night)
    check_entrants(night)
    solo_plan(night)  # solo tasks load, submissions exist, toolchains run
    return deck
