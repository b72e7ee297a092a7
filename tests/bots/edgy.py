"""A policy whose every string sits on a cap or is awkward Unicode (used by the tests)."""

from __future__ import annotations

from cogolf.bots.policy import load_policy
from cogolf.engine import rules

_literalist = load_policy("literalist")


def at_the_caps(observation):
    play = _literalist(observation)
    play["note"] = ("😀漢\ud800" * 200)[: rules.MAX_NOTE_CHARS + 50]
    tests = play["tests"]
    tests[0]["name"] = "名" * rules.MAX_NAME_CHARS
    tests[0]["why"] = "\udc00" + "é" * (rules.MAX_WHY_CHARS - 1)
    tests[1]["name"] = "x" * (rules.MAX_NAME_CHARS + 10) + "\x1b[2J"
    # args that are exactly at the size cap, and strings with lone surrogates inside args
    n = len(observation["spec"]["signature"]["params"])
    tests.append(
        {
            "name": "big",
            "args": ["a" * (rules.MAX_ARGS_CHARS - 4)][:n] + [0] * (n - 1),
            "expect": None,
            "why": "🙂",
        }
    )
    tests.append({"name": "sur", "args": ["\ud83d"] * n, "expect": "\udfff", "why": ""})
    play["impl"] = play["impl"] + "\n# " + "漢" * (rules.MAX_IMPL_CHARS - len(play["impl"]) - 3)
    return play
