"""The scripted baselines, played from the public deck alone.

`literalist` and `pedant` look the spec up by key in the public half of the pack
(bot processes never see the references) and submit its baseline implementation,
tests and note. The literalist is also the fallback for a seat that fails a hole.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogolf.bots.policy import Observation, Play, Policy
from cogolf.deck import DEFAULT_DECK, PublicDeck, load_public

SCRIPTED = ("literalist", "pedant")
BASELINE_NAMES = SCRIPTED  # seat order used by `cogolf deck check`


def baseline_play(deck: PublicDeck, key: str, name: str) -> dict[str, Any]:
    spec = deck.specs.get(key)
    if spec is None:
        raise KeyError(f"spec {key!r} is not in deck {deck.name} {deck.version}")
    baseline = spec.baselines[name]
    return {
        "impl": baseline.impl,
        "tests": [
            {"name": t.name, "args": t.args, "expect": t.expect, "why": t.why}
            for t in baseline.tests
        ],
        "note": baseline.note,
    }


MINIMAL_PLAY = {"impl": "def solve(*args):\n    return None\n", "tests": [], "note": ""}


def own_fallback(deck: PublicDeck | None, observation: Observation) -> dict[str, Any]:
    """What a bot plays when its policy fails a hole: the literalist's play (a minimal
    play for a spec the local deck does not know), so the seat still plays in time."""
    key = observation.get("spec", {}).get("key", "")
    if deck is not None and key in deck.specs:
        return baseline_play(deck, key, "literalist")
    return dict(MINIMAL_PLAY)


def scripted_policy(name: str, deck_dir: Path | None = None) -> Policy:
    deck = load_public(deck_dir or DEFAULT_DECK)

    def play(observation: Observation) -> Play:
        return baseline_play(deck, observation["spec"]["key"], name)

    play.__name__ = name
    return play
