"""A seat's own fallback verifies as what it is; replays from before the mark still verify.

The mark is the seat's word (a seat that sends a stand-in unmarked is not detected),
so what `--verify` can prove is that the record is one the match could have
written: a known cause, words only on a marked play and within the cap, and a
result that counts every marked play as a fallback.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import pytest

from cogolf.bots.policy import load_policy
from cogolf.engine import rules
from cogolf.replay import read_replay
from cogolf.runtime.seats import InProcessSeat
from cogolf.scorecard import render
from cogolf.verify import VerifyError
from tests.replay.helpers import edit, index_of, lines_of, play_in_process, write_lines

WORDS = "ValueError: no idea (at mine.py:3 in play)"


def marking_policy() -> Any:
    """The literalist, marking hole 1 as its own fallback (as `cogolf bot` would send it)."""
    literalist = load_policy("literalist")

    def play(observation: dict[str, Any]) -> dict[str, Any]:
        out = literalist(observation)
        if observation["hole"] == 1:
            out["fallback"] = {"cause": "policy_raised", "detail": WORDS}
        return out

    return play


@pytest.fixture(scope="module")
def marked(tmp_path_factory: pytest.TempPathFactory) -> Path:
    path = tmp_path_factory.mktemp("marked") / "marked-1.ndjson"
    seats = [InProcessSeat(0, marking_policy()), InProcessSeat(1, load_policy("pedant"))]
    return play_in_process(path, seats=seats)


def test_a_marked_play_is_recorded_counted_and_verifies(marked, shared):
    subs = [e for e in read_replay(marked).events if e.__struct_config__.tag == "submission"]
    first = next(s for s in subs if s.slot == 0 and s.hole == 1)
    assert (first.source, first.fallback_cause, first.fallback_detail) == (
        "seat_fallback", "policy_raised", WORDS
    )
    assert first.attempts == 1 and first.errors == []
    result = read_replay(marked).result
    assert result.fallbacks == [1, 0] and result.fallback_causes == [{"policy_raised": 1}, {}]
    assert "Ash FALLBACK(own: policy_raised)" in render(read_replay(marked))
    assert shared.verify(marked).holes_resolved == 2


def test_a_replay_written_before_the_mark_existed_still_verifies(honest, shared, tmp_path):
    lines = [line.replace(',"fallback_detail":""', "") for line in lines_of(honest)]
    assert not any("fallback_detail" in line for line in lines)
    old = write_lines(tmp_path / "old.ndjson", lines)
    assert shared.verify(old).holes_resolved == 2


def _first_own(lines: list[str]) -> int:
    return index_of(lines, "submission", 0, source="seat_fallback")


def _seat_of(lines: list[str]) -> int:
    return index_of(lines, "submission", 0, source="seat")


CASES = {
    "an unknown cause": (_first_own, {"fallback_cause": "made_up"}, "unknown cause 'made_up'"),
    "no cause": (_first_own, {"fallback_cause": None}, "unknown cause None"),
    "words over the cap": (
        _first_own,
        {"fallback_detail": "x" * (rules.MAX_FALLBACK_DETAIL_CHARS + 1)},
        "fallback_detail over the cap",
    ),
    "words with a control character": (
        _first_own, {"fallback_detail": "a\x1b[2Jb"}, "fallback_detail over the cap or not clean"
    ),
    "words on the seat's own play": (
        _seat_of, {"fallback_detail": "forged"}, "did not mark as its own fallback"
    ),
    "a marked play passed off as the seat's": (
        _first_own, {"source": "seat"}, "did not mark as its own fallback"
    ),
    "a marked play passed off as the seat's, words dropped": (
        _first_own, {"source": "seat", "fallback_detail": ""}, "own play with a fallback cause"
    ),
    "a marked play with no attempt": (_first_own, {"attempts": 0}, "no attempt"),
    # the mark and its cause are inputs, but the result must count what they say
    "the seat's play marked after the fact": (
        _seat_of, {"source": "seat_fallback", "fallback_cause": "policy_raised"}, "fallbacks"
    ),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_altered_mark_fails_naming_its_line(name, marked, shared, tmp_path):
    where, fields, phrase = CASES[name]
    lines = lines_of(marked)
    i = where(lines)
    bad = write_lines(tmp_path / "bad.ndjson", edit(lines, i, lambda d: d.update(fields)))
    with pytest.raises(VerifyError) as caught:
        shared.verify(bad)
    message = str(caught.value)
    assert "\n" not in message and phrase in message, message
    if phrase != "fallbacks":
        assert message.startswith(f"{bad}:{i + 1}:"), message
    else:  # the submission itself is a valid input: the result line then disagrees
        assert message.startswith(f"{bad}:{len(lines)}:"), message
    json.loads(lines[i])  # the honest line was JSON: only the change is refused
