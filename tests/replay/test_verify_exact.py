"""`--verify` accepts exactly the file the inputs re-derive, and names the first line that is not.

Each case below was accepted, rejected or crashed before: altered files that
verified, an honest file that did not, files that raised KeyError, IndexError,
ValueError, DeckError or RecursionError in `replay`, `--verify` and resume.
"""

from __future__ import annotations

import contextlib
import json
import subprocess
import sys

import pytest

from cogolf.games.cogolf.hosted import journal_prefix
from cogolf.replay import ReplayError, read_replay
from cogolf.scorecard import render
from cogolf.verify import VerifyError
from tests.replay.helpers import DECK, edit, index_of, lines_of, write_lines


def nested(depth: int) -> object:
    value: object = 0
    for _ in range(depth):
        value = [value]
    return value


def swap(lines: list[str], i: int, j: int) -> list[str]:
    out = list(lines)
    out[i], out[j] = out[j], out[i]
    return out


def set_field(kind: str, key: str, value: object, nth: int = 0, **where: object):
    def mutate(lines: list[str]) -> list[str]:
        return edit(lines, index_of(lines, kind, nth, **where), lambda d: d.__setitem__(key, value))

    return mutate


def drop_field(kind: str, key: str):
    return lambda lines: edit(lines, index_of(lines, kind), lambda d: d.pop(key))


def header(change):
    return lambda lines: edit(lines, 0, change)


def duplicate(kind: str):
    def mutate(lines: list[str]) -> list[str]:
        i = index_of(lines, kind)
        return [*lines[: i + 1], lines[i], *lines[i + 1 :]]

    return mutate


def fake_submission_first(lines: list[str]) -> list[str]:
    i = index_of(lines, "submission")
    fake = json.loads(lines[i])
    fake["impl"] = "def solve(*a):\n    return None\n"
    return [*lines[:i], json.dumps(fake, separators=(",", ":")), *lines[i:]]


def renumber_hole_two(lines: list[str]) -> list[str]:
    out = list(lines)
    for i, line in enumerate(out):
        doc = json.loads(line)
        if doc.get("hole") == 2:
            doc["hole"] = 3
            out[i] = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    return out


def swapped_names(doc: dict) -> None:
    doc["names"].reverse()


def swapped_aliases(doc: dict) -> None:
    doc["aliases"].reverse()


def config(key: str, value: object):
    return header(lambda d: d["config"].__setitem__(key, value))


def sandbox(key: str, value: object):
    return header(lambda d: d["sandbox"].__setitem__(key, value))


def deep_args(lines: list[str]) -> list[str]:
    return edit(
        lines, index_of(lines, "test_verdict"), lambda d: d.__setitem__("args", nested(500))
    )


def spaced(lines: list[str]) -> list[str]:
    i = index_of(lines, "par_result")
    return [*lines[:i], json.dumps(json.loads(lines[i])), *lines[i + 1 :]]


CASES = {
    # accepted before, though the scorecard then credited the wrong seat
    "header names swapped": (header(swapped_names), "names"),
    "header aliases swapped": (header(swapped_aliases), "aliases"),
    "a fake submission before the real one": (fake_submission_first, "submission"),
    # the fuzz's 164 accepted alterations, by kind
    "result line deleted": (lambda ls: ls[:-1], "result"),
    "submission duplicated": (duplicate("submission"), "submission"),
    "hole_score duplicated": (duplicate("hole_score"), "hole_score"),
    "episode_end duplicated": (duplicate("episode_end"), "episode_end"),
    "two verdicts swapped": (
        lambda ls: swap(ls, index_of(ls, "test_verdict"), index_of(ls, "test_verdict", 1)),
        "test_verdict",
    ),
    "score_override key": (set_field("hole_score", "score_override", [9, -9]), "score_override"),
    "renamed spec_key": (set_field("hole_start", "spec_key", "reverse_words"), "spec_key"),
    "hole_score spec_key": (set_field("hole_score", "spec_key", "reverse_words"), "spec_key"),
    "renumbered holes": (renumber_hole_two, "hole"),
    "holes_played 0": (set_field("episode_end", "holes_played", 0), "holes_played"),
    "holes_played 2**64": (set_field("episode_end", "holes_played", 2**64), "holes_played"),
    "result holes_played": (set_field("result", "holes_played", 1), "holes_played"),
    "dropped key": (drop_field("submission", "wrong_hole"), "wrong_hole"),
    "dropped default key": (drop_field("episode_end", "detail"), "detail"),
    "sandbox weak flipped": (sandbox("weak", True), "weak"),
    "sandbox extra field": (sandbox("seccomp", "off"), "sandbox"),
    "reason changed": (set_field("episode_end", "reason", "deadline"), "reason"),
    "winner changed": (set_field("result", "winner", 1), "winner"),
    "int became float": (set_field("par_result", "par_fails", 1.0), "par_fails"),
    "not canonical spacing": (spaced, "canonical"),
    # crashed before with KeyError / IndexError / ValueError / DeckError / RecursionError
    "submission slot 2": (set_field("submission", "slot", 2), "slot"),
    "submission slot 3": (set_field("submission", "slot", 3, 1), "slot"),
    "submission slot 2**63": (set_field("submission", "slot", 2**63), "slot"),
    "par slot 7": (set_field("par_result", "slot", 7), "slot"),
    "hole 0": (set_field("hole_start", "hole", 0), "hole 0"),
    "verdict slot 5": (set_field("test_verdict", "slot", 5), "slot"),
    "hole 7 of 2": (set_field("hole_score", "hole", 7), "hole 7"),
    "config holes 0": (config("holes", 0), "holes"),
    "config holes 100": (config("holes", 100), "holes"),
    "args nested 500 deep": (deep_args, "nesting"),
    "a number out of range": (
        lambda ls: [*ls[:1], ls[1].replace('"at":', '"at":1e999,"x":'), *ls[2:]],
        "",
    ),
    "result cut short": (lambda ls: [*ls[:-1], ls[-1][:40]], "truncated"),
    "match unfinished": (lambda ls: ls[: index_of(ls, "hole_score") + 1], "did not finish"),
    "header only": (lambda ls: ls[:1], "did not finish"),
}


@pytest.mark.parametrize("name", sorted(CASES))
def test_an_altered_replay_fails_naming_its_line(name, honest, shared, tmp_path):
    mutate, phrase = CASES[name]
    bad = write_lines(tmp_path / "bad.ndjson", mutate(lines_of(honest)))
    with pytest.raises(VerifyError) as caught:
        shared.verify(bad)
    message = str(caught.value)
    assert "\n" not in message and message.startswith(f"{bad}:"), message
    assert phrase in message, message
    # Every other reader either reads it or refuses it with one line: never a traceback.
    try:
        replay = read_replay(bad)
    except ReplayError as exc:
        assert str(exc).startswith(f"{bad}:") and "\n" not in str(exc)
    else:
        render(replay)
        with contextlib.suppress(ReplayError):
            journal_prefix(bad, DECK)


def test_the_honest_replay_verifies_and_wall_clock_fields_are_free(honest, shared, tmp_path):
    report = shared.verify(honest)
    assert report.holes_resolved == 2 and report.reason == "complete"
    assert report.names == ("literalist", "pedant")
    lines = lines_of(honest)
    lines = edit(lines, 0, lambda d: d.__setitem__("started_at", 12.5))
    lines = edit(lines, index_of(lines, "submission"), lambda d: d.__setitem__("at", 3))
    lines = edit(lines, len(lines) - 1, lambda d: d.__setitem__("wall_clock_seconds", 99.0))
    assert shared.verify(write_lines(tmp_path / "clock.ndjson", lines)).holes_resolved == 2
    torn = tmp_path / "torn.ndjson"
    torn.write_text("\n".join(lines))  # the result line never got its newline
    with pytest.raises(VerifyError, match="cut off"):
        shared.verify(torn)
    assert read_replay(torn).torn_tail and read_replay(torn).result is None
    negative = edit(lines, 0, lambda d: d.__setitem__("started_at", -1.0))
    with pytest.raises(VerifyError, match="started_at"):
        shared.verify(write_lines(tmp_path / "neg.ndjson", negative))


def cli(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args], capture_output=True, text=True, timeout=300
    )


def test_the_cli_says_one_line_and_exits_2_for_a_malformed_file(honest, tmp_path):
    for name in ("submission slot 2**63", "hole 7 of 2", "args nested 500 deep", "par slot 7"):
        bad = write_lines(tmp_path / "bad.ndjson", CASES[name][0](lines_of(honest)))
        for extra in ([], ["--verify"]):
            done = cli("replay", str(bad), *extra)
            assert done.returncode == 2, (name, done.stderr)
            assert "Traceback" not in done.stderr and done.stdout == ""
            assert done.stderr.count("\n") == 1 and f"{bad}:" in done.stderr, done.stderr


def test_the_cli_names_the_first_difference_and_exits_1(honest, tmp_path):
    bad = write_lines(tmp_path / "bad.ndjson", CASES["header names swapped"][0](lines_of(honest)))
    done = cli("replay", str(bad), "--verify")
    assert done.returncode == 1 and "Traceback" not in done.stderr
    assert f"NOT VERIFIED: {bad}:1: header: .names[0]" in done.stderr, done.stderr
    assert "wins" not in done.stdout  # no scorecard credits anyone from an unproved file
    good = cli("replay", str(honest), "--verify")
    assert good.returncode == 0 and "verified: 2 holes" in good.stdout, good.stderr


def test_a_replay_line_may_be_at_most_the_depth_intake_accepts(honest, shared, tmp_path):
    # 64 levels of args (the deepest value) inside a verdict reads back; 101 levels do not.
    ok = edit(lines_of(honest), 4, lambda d: d.__setitem__("args", nested(64)))
    with pytest.raises(VerifyError, match="args"):
        shared.verify(write_lines(tmp_path / "a.ndjson", ok))  # read fine, differs
    too_deep = edit(lines_of(honest), 4, lambda d: d.__setitem__("args", nested(100)))
    with pytest.raises(VerifyError, match="nesting deeper than 100") as caught:
        shared.verify(write_lines(tmp_path / "b.ndjson", too_deep))
    assert caught.value.malformed and caught.value.line == 5
