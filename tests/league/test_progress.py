"""Progress output: a bar on a terminal, plain lines elsewhere."""

from __future__ import annotations

import io

from cogolf import messages as m
from cogolf.league.progress import Progress


def result(names: list[str], scores: list[int]) -> m.MatchResult:
    winner = None if scores[0] == scores[1] else (0 if scores[0] > scores[1] else 1)
    return m.MatchResult(
        match_id="x", names=names, aliases=["Ash", "Basil"], scores=scores, hole_scores=[],
        breaches=[0, 0], breaches_taken=[0, 0], par_fails=[0, 0], tests_fired=[0, 0],
        illegal_tests=[0, 0], holes_played=1, fallbacks=[0, 0], fallback_causes=[{}, {}],
        reason="complete", wall_clock_seconds=0.0, seed=0, deck_version="v", deck_digest="d",
        winner=winner, killer_test=None,
    )  # fmt: skip


class Clock:
    def __init__(self) -> None:
        self.now = 100.0

    def __call__(self) -> float:
        return self.now


def test_plain_lines_name_the_match_leader_and_times():
    out, clock = io.StringIO(), Clock()
    p = Progress(4, out, tty=False, clock=clock)
    p.skipped(result(["a", "b"], [3, -3]))
    p.start()
    clock.now += 10
    p.finished("m2", result(["b", "c"], [5, -5]), None)
    clock.now += 10
    p.finished("m3", None, "attempt 1: boom; attempt 2: boom")
    lines = out.getvalue().splitlines()
    assert lines[0] == "night: 4 matches, 1 already done, 3 to play"
    assert lines[1] == "match m2 5:-5  2/4  leader a (3 pts, +6)  elapsed 0:10  left ~0:20"
    assert lines[2].startswith("match m3 void (attempt 1: boom; attempt 2: boom)  3/4")
    assert lines[2].endswith("elapsed 0:20  left ~0:10")


def test_a_terminal_gets_one_redrawn_bar():
    out = io.StringIO()
    p = Progress(2, out, tty=True, clock=Clock())
    p.start()
    p.finished("m1", result(["a", "b"], [0, 0]), None)
    p.finished("m2", result(["a", "c"], [1, -1]), None)
    text = out.getvalue()
    assert text.count("\r") == 2 and text.endswith("\n") and text.count("\n") == 1
    assert "[############------------] 1/2" in text
    assert "[########################] 2/2  leader a (4 pts, +2)" in text


def test_the_line_counts_void_matches_and_retried_attempts():
    out, clock = io.StringIO(), Clock()
    p = Progress(3, out, tty=False, clock=clock)
    p.start()
    p.retried()
    clock.now += 30  # the void match took two attempts
    p.finished("m1", None, "attempt 1: x; attempt 2: x")
    clock.now += 10
    p.finished("m2", result(["a", "b"], [1, -1]), None)
    lines = out.getvalue().splitlines()
    assert "1/3 (1 void, 1 retried)  leader -  elapsed 0:30  left ~1:00" in lines[1]
    assert lines[2].endswith("2/3 (1 void, 1 retried)  leader a (3 pts, +2)  elapsed 0:40  "
                             "left ~0:20")
