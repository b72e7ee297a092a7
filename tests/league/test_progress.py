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
    assert lines[2].startswith("match m3 void (boom)  3/4")  # the last attempt's cause
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


FAILED_SEAT = (
    "attempt 1: PlayError: seat 1: bot exited with code 1 before connecting (b); the last "
    "lines of logs/m1.b.log:\n    Traceback (most recent call last):\n      File \"b.py\", "
    "line 2\n    ModuleNotFoundError: No module named 'x'; attempt 2: PlayError: seat 1: bot "
    "exited with code 1 before connecting (b); the last lines of logs/m1.b.log:\n    "
    "Traceback (most recent call last):\n    ModuleNotFoundError: No module named 'x'"
)


def test_a_void_match_is_one_line_with_the_logs_last_line_and_where_the_log_is():
    from pathlib import Path

    from cogolf.league.progress import MAX_CAUSE, void_line

    assert void_line(FAILED_SEAT, Path("replays/n")) == (
        "seat 1: bot exited with code 1 before connecting (b): ModuleNotFoundError: No module "
        "named 'x' (log: replays/n/logs/m1.b.log)"
    )
    assert void_line("attempt 1: a\x1b[2Jb; attempt 2: " + "y" * 1000)[:3] == "yyy"
    assert len(void_line("attempt 1: " + "y" * 1000)) == MAX_CAUSE
    assert "\x1b" not in void_line("attempt 1: a\x1b[2Jb")
    # On a terminal the line goes above the bar, which stays one redrawn line.
    out = io.StringIO()
    p = Progress(2, out, tty=True, clock=Clock(), logs_root=Path("replays/n"))
    p.start()
    p.finished("m1", result(["a", "b"], [0, 0]), None)
    p.finished("m2", None, FAILED_SEAT)
    text = out.getvalue()
    assert "\rmatch m2 void: seat 1: bot exited" in text.replace("\x1b[2K", "")
    assert text.count("Traceback") == 0 and text.endswith("\n")


def test_the_progress_file_names_the_matches_in_play_and_the_time_left(tmp_path):
    import asyncio
    import json

    from cogolf.league.executors import run_jobs
    from cogolf.league.progress_file import write_progress

    clock = Clock()
    p = Progress(3, io.StringIO(), tty=False, clock=clock)
    seen: list[list[str]] = []

    class Job:
        def __init__(self, match_id: str) -> None:
            self.match_id = match_id

    def started(job: Job) -> None:
        p.started_match(job.match_id)
        write_progress(tmp_path, "n", p, "matches", 0)

    async def attempt(job: Job, folder: object) -> object:
        seen.append(json.loads((tmp_path / "progress.json").read_text())["playing"])
        raise RuntimeError("no match here")  # void: the test is about the file

    def done(outcome: object) -> None:
        clock.now += 10
        p.finished(outcome.match_id, None, outcome.void_cause)  # type: ignore[attr-defined]
        write_progress(tmp_path, "n", p, "matches", 0)

    asyncio.run(run_jobs([Job("m1"), Job("m2")], tmp_path, attempt=attempt, parallel=1,
                         on_done=done, on_start=started))  # type: ignore[arg-type]
    assert seen == [["m1"], ["m1"], ["m2"], ["m2"]]  # each in play while tried (twice)
    doc = json.loads((tmp_path / "progress.json").read_text())
    assert doc["playing"] == [] and doc["elapsed_seconds"] == 20.0
    assert doc["eta_seconds"] == 10.0  # 10 s a match, one left
    p.solo = (2, 5)
    write_progress(tmp_path, "n", p, "solo", 0)
    assert json.loads((tmp_path / "progress.json").read_text())["solo"] == {"done": 2, "total": 5}
