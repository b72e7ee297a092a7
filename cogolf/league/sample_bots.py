"""Two small scripted bots for example nights, so a night has more than the two baselines.

`parrot` plays from the observation alone: it answers the spec's two examples and
nothing else, and fires the examples as its tests (always legal, rarely a
breach). `hybrid` submits the literalist's implementation with the pedant's
tests, read from the public half of the core pack. Reference them as
`cogolf.league.sample_bots:parrot` and `cogolf.league.sample_bots:Hybrid`.
"""

from __future__ import annotations

import json
from typing import Any

from cogolf.bots.scripted import baseline_play
from cogolf.deck import DEFAULT_DECK, PublicDeck, load_public
from cogolf.engine import rules

PARROT_SOURCE = """import json

_EXAMPLES = json.loads({examples!r})


def {function}(*args):
    for example in _EXAMPLES:
        if example["args"] == list(args):
            return example["expect"]
    return None
"""


def parrot(observation: dict[str, Any]) -> dict[str, Any]:
    spec = observation["spec"]
    examples = spec["examples"]
    source = PARROT_SOURCE.format(
        examples=json.dumps(examples, separators=(",", ":")),
        function=spec["signature"]["function"],
    )
    if len(source) > rules.MAX_IMPL_CHARS:
        source = PARROT_SOURCE.format(examples="[]", function=spec["signature"]["function"])
    tests = [
        {"name": f"example {i + 1}", "args": ex["args"], "expect": ex["expect"], "why": "given"}
        for i, ex in enumerate(examples[: rules.MAX_TESTS])
    ]
    return {"impl": source, "tests": tests, "note": "the examples, and nothing else"}


class Hybrid:
    """The literalist's code defended by the pedant's tests."""

    def __init__(self) -> None:
        self.deck: PublicDeck = load_public(DEFAULT_DECK)

    def play(self, observation: dict[str, Any]) -> dict[str, Any]:
        key = observation["spec"]["key"]
        lit = baseline_play(self.deck, key, "literalist")
        ped = baseline_play(self.deck, key, "pedant")
        return {"impl": lit["impl"], "tests": ped["tests"], "note": "literal code, pedantic tests"}
