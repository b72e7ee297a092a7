"""Every input check of `--verify`, each with an altered replay of its own: the first
value refused fails naming the line of the record and the check, and where a bound
has a last accepted value, that value passes the check (the file then verifies, or
fails later for what it changed in the match).

A forged fallback is the case that matters most: a seat's play relabelled as the
fallback, or the fallback's code replaced, must not verify.
"""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import pytest

from cogolf.bots.policy import load_policy
from cogolf.engine import rules
from cogolf.runtime.seats import InProcessSeat
from cogolf.verify import VerifyError, verify_replay_file
from tests.replay.helpers import (
    DECK,
    SharedSandbox,
    edit,
    index_of,
    lines_of,
    play_in_process,
    write_lines,
)


def raising_on_hole_one() -> Any:
    literalist = load_policy("literalist")

    def play(observation: dict[str, Any]) -> dict[str, Any]:
        if observation["hole"] == 1:
            raise RuntimeError("no play")
        return literalist(observation)

    return play


@pytest.fixture(scope="module")
def fell_back(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real match whose seat 0 failed hole 1, so the fallback play was recorded."""
    path = tmp_path_factory.mktemp("fell") / "fell-1.ndjson"
    seats = [InProcessSeat(0, raising_on_hole_one()), InProcessSeat(1, load_policy("pedant"))]
    return play_in_process(path, seats=seats)


def _fallback(lines: list[str]) -> int:
    return index_of(lines, "submission", 0, source="fallback")


def _seat(lines: list[str]) -> int:
    return index_of(lines, "submission", 0, source="seat")


def _pedant(lines: list[str]) -> int:
    """The pedant's play on hole 1, which is not the fallback play (the literalist's is)."""
    return index_of(lines, "submission", 0, source="seat", slot=1, hole=1)


def _header(lines: list[str]) -> int:
    return 0


def _sub(**fields: Any) -> Any:
    return lambda d: d.update(fields)


def _conf(key: str, value: Any) -> Any:
    return lambda d: d["config"].__setitem__(key, value)


def _seed(value: int) -> Any:
    def go(d: dict[str, Any]) -> None:
        d["seed"] = d["config"]["seed"] = value

    return go


def _sandbox(**fields: Any) -> Any:
    return lambda d: d["sandbox"].update(fields)


def _tests(change: Any) -> Any:
    def go(d: dict[str, Any]) -> None:
        d["tests"] = change(d["tests"])

    return go


def _drop_sandbox_mode(d: dict[str, Any]) -> None:
    del d["sandbox"]["mode"]


MISSING = "missing-for-this-test"
IMPL_CAP = "impl over the cap or not clean text"
NOTE_CAP = "note over the cap or not clean text"
DIFFERS = "impl, tests or note differ from the fallback play"
NOT_A_FLOAT = "header: config: Expected `float`, got `str` - at `$.hole_deadline_seconds`"
# name: (file, which line, change, the phrase of its check)
REFUSED: dict[str, tuple[str, Any, Any, str]] = {
    "seed -1": ("honest", _header, _seed(-1), "seed -1 is outside 0..2**63-1"),
    "seed 2**63": ("honest", _header, _seed(2**63), "is outside 0..2**63-1"),
    "hole deadline past its cap": (
        "honest", _header, _conf("hole_deadline_seconds", 10**6),
        "hole_deadline_seconds 1000000.0 is outside 0.05..3600.0",
    ),
    "retry deadline past its cap": (
        "honest", _header, _conf("retry_deadline_seconds", 10**6),
        "retry_deadline_seconds 1000000.0 is outside 0.05..3600.0",
    ),
    "match deadline past its cap": (
        "honest", _header, _conf("match_deadline_seconds", 10**9),
        "match_deadline_seconds 1000000000.0 is outside 0.05..86400.0",
    ),
    "a blank name": (
        "honest", _header, _conf("names", ["  ", "pedant"]),
        "names must not be empty",
    ),
    "hash_seed -1": ("honest", _header, _conf("hash_seed", -1), "outside 0..2**32-1"),
    "hash_seed 2**32": ("honest", _header, _conf("hash_seed", 2**32), "outside 0..2**32-1"),
    "config not a config": (
        "honest", _header, _conf("hole_deadline_seconds", "5"), NOT_A_FLOAT
    ),
    "sandbox key missing": (
        "honest", _header, _drop_sandbox_mode, "keys missing ['mode'], unknown []"
    ),
    "sandbox key unknown": (
        "honest", _header, _sandbox(seccomp="off"), "keys missing [], unknown ['seccomp']"
    ),
    "sandbox key of the wrong kind": (
        "honest", _header, _sandbox(pre_forked="2"), "sandbox.pre_forked: not a int"
    ),
    "sandbox weak as a number": ("honest", _header, _sandbox(weak=0), "sandbox.weak: not a bool"),
    "a wall not described by a string": (
        "honest", _header, _sandbox(walls={"net": 1}), "every wall is described by a string"
    ),
    "weak walls recorded as strong": (
        "honest", _header, _sandbox(walls={"net": MISSING}, weak=False), "the walls say True"
    ),
    "a weak sandbox without accept_weak": (
        "honest",
        _header,
        _sandbox(walls={"net": MISSING}, weak=True, accept_weak=False),
        "a weak sandbox runs only with accept_weak",
    ),
    "attempts 3": ("honest", _seat, _sub(attempts=3), "attempts or wrong_hole out of range"),
    "attempts -1": ("honest", _seat, _sub(attempts=-1), "attempts or wrong_hole out of range"),
    "wrong_hole 2**31": (
        "honest", _seat, _sub(wrong_hole=2**31), "attempts or wrong_hole out of range"
    ),
    "wrong_hole -1": ("honest", _seat, _sub(wrong_hole=-1), "attempts or wrong_hole out of range"),
    "dropped_tests 2**31": (
        "honest", _seat, _sub(dropped_tests=2**31), "dropped_tests out of range"
    ),
    "dropped_tests -1": ("honest", _seat, _sub(dropped_tests=-1), "dropped_tests out of range"),
    "a seat's play with no attempt": ("honest", _seat, _sub(attempts=0), "with no attempt"),
    "a seat's play with a cause": (
        "honest", _seat, _sub(fallback_cause="timeout"), "own play with a fallback cause"
    ),
    "impl with a control character": (
        "honest", _seat, _sub(impl="def solve(x):\x1b\n    return x\n"), IMPL_CAP
    ),
    "impl one past its cap": (
        "honest", _seat, _sub(impl="#" * (rules.MAX_IMPL_CHARS + 1)), IMPL_CAP
    ),
    "one test past the cap": (
        "honest",
        _seat,
        _tests(lambda ts: (ts or [{"name": "t", "args": [], "expect": 0, "why": ""}]) * 6),
        f"tests (at most {rules.MAX_TESTS} are kept)",
    ),
    "a test name one past its cap": (
        "honest",
        _seat,
        _tests(lambda ts: [{"name": "n" * (rules.MAX_NAME_CHARS + 1), "args": [], "expect": 0,
                            "why": ""}]),
        "tests[0]: name or why over the cap or not clean text",
    ),
    "a test's why one past its cap": (
        "honest",
        _seat,
        _tests(lambda ts: [{"name": "n", "args": [], "expect": 0,
                            "why": "w" * (rules.MAX_WHY_CHARS + 1)}]),
        "tests[0]: name or why over the cap or not clean text",
    ),
    "a note one past its cap": (
        "honest", _seat, _sub(note="n" * (rules.MAX_NOTE_CHARS + 1)), NOTE_CAP
    ),
    "fallback words on the seat's own play": (
        "honest",
        _seat,
        _sub(fallback_detail="forged"),
        "fallback words on a submission the seat did not mark as its own fallback",
    ),
    "a seat's own fallback with words past their cap": (
        "honest",
        _seat,
        _sub(source="seat_fallback", fallback_cause="policy_raised",
             fallback_detail="d" * (rules.MAX_FALLBACK_DETAIL_CHARS + 1)),
        "intake never keeps this: fallback_detail over the cap or not clean text",
    ),
    # the forgeries: a seat's play passed off as the fallback, a fallback rewritten
    "a seat's play relabelled as the fallback": (
        "honest",
        _pedant,
        _sub(source="fallback", fallback_cause="timeout"),
        DIFFERS,
    ),
    "the fallback's code replaced": (
        "fell_back",
        _fallback,
        _sub(impl="def solve(*a):\n    return 0\n"),
        DIFFERS,
    ),
    "the fallback's note replaced": (
        "fell_back", _fallback, _sub(note="mine"), DIFFERS
    ),
    "a test added to the fallback": (
        "fell_back",
        _fallback,
        _tests(lambda ts: [*ts, {"name": "t", "args": [], "expect": 0, "why": ""}]),
        DIFFERS,
    ),
    "a fallback without its cause": (
        "fell_back", _fallback, _sub(fallback_cause=None), "a fallback without its cause"
    ),
}


def _verify(shared: SharedSandbox, path: Path, keys: frozenset[str] | None = None) -> Any:
    keys = frozenset(shared.sandbox.describe()) if keys is None else keys
    return asyncio.run(verify_replay_file(path, DECK, shared.resolve, keys))


@pytest.mark.parametrize("name", sorted(REFUSED))
def test_each_input_check_refuses_its_first_bad_value(
    name: str, honest: Path, fell_back: Path, shared: SharedSandbox, tmp_path: Path
) -> None:
    which, where, change, phrase = REFUSED[name]
    lines = lines_of(honest if which == "honest" else fell_back)
    i = where(lines)
    bad = write_lines(tmp_path / "bad.ndjson", edit(lines, i, change))
    with pytest.raises(VerifyError) as caught:
        _verify(shared, bad)
    message = str(caught.value)
    assert message.startswith(f"{bad}:{i + 1}: ") and "\n" not in message, message
    assert message.endswith(phrase), message  # the check's words, whole
    assert not caught.value.malformed


def test_the_fallback_replay_verifies(fell_back: Path, shared: SharedSandbox) -> None:
    subs = [json.loads(line) for line in lines_of(fell_back) if '"kind":"submission"' in line]
    assert [s["source"] for s in subs if s["hole"] == 1] == ["fallback", "seat"]
    assert _verify(shared, fell_back).holes_resolved == 2


# name: (change to a header or submission, verifies): each bound's last accepted value
# passes its check; a change the match re-derives otherwise fails on a later line.
ACCEPTED: dict[str, tuple[Any, Any]] = {
    "hash_seed 2**32-1": (_header, _conf("hash_seed", 2**32 - 1)),
    "hash_seed 0": (_header, _conf("hash_seed", 0)),
    "a weak sandbox with accept_weak": (
        _header, _sandbox(walls={"net": MISSING}, weak=True, accept_weak=True)
    ),
    "wrong_hole 2**31-1": (_seat, _sub(wrong_hole=2**31 - 1)),
    "dropped_tests 2**31-1": (_seat, _sub(dropped_tests=2**31 - 1)),
    "a note at its cap": (_seat, _sub(note="n" * rules.MAX_NOTE_CHARS)),
    "attempts 2": (_seat, _sub(attempts=2)),
}


@pytest.mark.parametrize("name", sorted(ACCEPTED))
def test_the_last_value_accepted_verifies(
    name: str, honest: Path, shared: SharedSandbox, tmp_path: Path
) -> None:
    where, change = ACCEPTED[name]
    lines = lines_of(honest)
    ok = write_lines(tmp_path / "ok.ndjson", edit(lines, where(lines), change))
    assert _verify(shared, ok).holes_resolved == 2


def test_the_last_seed_accepted_passes_its_check_and_fails_on_the_draw(
    honest: Path, shared: SharedSandbox, tmp_path: Path
) -> None:
    bad = write_lines(tmp_path / "later.ndjson", edit(lines_of(honest), 0, _seed(2**63 - 1)))
    with pytest.raises(VerifyError) as caught:
        _verify(shared, bad)
    assert str(caught.value).startswith(f"{bad}:1: header: .holes"), str(caught.value)


def test_an_impl_at_its_cap_passes_the_intake_check(
    honest: Path, shared: SharedSandbox, tmp_path: Path
) -> None:
    impl = "def solve(*a):\n    return 0\n"
    impl += "#" * (rules.MAX_IMPL_CHARS - len(impl))
    lines = lines_of(honest)
    i = _seat(lines)
    path = write_lines(tmp_path / "cap.ndjson", edit(lines, i, _sub(impl=impl)))
    with pytest.raises(VerifyError) as caught:
        _verify(shared, path)
    assert "intake never keeps this" not in str(caught.value), str(caught.value)
    assert not str(caught.value).startswith(f"{path}:{i + 1}:"), str(caught.value)


def test_a_known_sandbox_key_must_hold_a_plain_value(
    honest: Path, shared: SharedSandbox, tmp_path: Path
) -> None:
    keys = frozenset({*shared.sandbox.describe(), "pool"})
    lines = lines_of(honest)
    for value, verifies in ((3, True), ([1, "a"], True), (None, True), (1.5, False)):
        path = write_lines(tmp_path / "pool.ndjson", edit(lines, 0, _sandbox(pool=value)))
        if verifies:
            assert _verify(shared, path, keys).holes_resolved == 2
        else:
            with pytest.raises(VerifyError, match=r":1: header: sandbox.pool: not a plain value"):
                _verify(shared, path, keys)
