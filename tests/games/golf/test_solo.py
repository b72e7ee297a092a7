"""The solo-hole core (prompt, intake, the one-seat collector) and the score command."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import msgspec
import pytest

from cogolf.engine.collect import HoleCollector, Observe, PlayFallback, Refuse
from cogolf.engine.intake import Rejected
from cogolf.games.golf.courses import get_course
from cogolf.games.golf.holes import HoleSet
from cogolf.games.golf.runners.base import DEFAULT_LIMITS
from cogolf.games.golf.solo import AcceptedSource, accept_submission, observation


def test_observation_shows_public_tests_only(holes: HoleSet) -> None:
    hole = holes.hole("reverse-string")
    body = observation(get_course("rust"), hole, 1, 18, DEFAULT_LIMITS, 0.0)
    doc = msgspec.to_builtins(body)
    assert doc["game"] == "golf" and doc["course"] == "rust" and doc["hole"] == 1
    task = doc["task"]
    assert task["key"] == "reverse-string" and task["signature"].startswith("fn f(s: String)")
    assert task["public_tests"][0] == {"args": ["hello"], "expect": "olleh"}
    assert len(task["public_tests"]) == len(hole.public)
    private_args = [list(t.args) for t in hole.private]
    assert all(t["args"] not in private_args for t in task["public_tests"])
    assert doc["rules"]["max_source_bytes"] == 64 * 1024 and "2021" in doc["rules"]["language"]


def test_intake_accepts_exact_bytes_and_names_the_field() -> None:
    ok = accept_submission(json.dumps({"type": "submission", "hole": 2, "source": "f=1\r\n"}), 2)
    assert ok == AcceptedSource(2, b"f=1\r\n")
    assert accept_submission('{"type":"submission","hole":2,"source":null}', 2) == (
        AcceptedSource(2, None)
    )
    bad = accept_submission('{"type":"submission","hole":2,"source":5}', 2)
    assert isinstance(bad, Rejected) and bad.cause == "malformed" and "$.source" in bad.message
    missing = accept_submission('{"type":"submission","hole":2}', 2)
    assert isinstance(missing, Rejected) and "source" in missing.message
    wrong = accept_submission('{"type":"submission","hole":3,"source":""}', 2)
    assert isinstance(wrong, Rejected) and wrong.cause == "wrong_hole" and wrong.hole == 3
    surrogate = accept_submission('{"type":"submission","hole":2,"source":"\\ud800"}', 2)
    assert isinstance(surrogate, Rejected) and "UTF-8" in surrogate.message
    assert accept_submission(b"\xff", 2).cause == "malformed"  # type: ignore[union-attr]
    assert accept_submission("NaN", 2).cause == "malformed"  # type: ignore[union-attr]
    big = json.dumps({"type": "submission", "hole": 2, "source": "x" * 20000})
    assert accept_submission(big, 2).cause == "oversize"  # type: ignore[union-attr]


def test_one_seat_collector_retry_then_fallback() -> None:
    c = HoleCollector(1, 0.0, 10.0, 2.0, (True,), (False,), intake=accept_submission)
    assert c.open() == [Observe(0, False, 10.0)]
    effects = c.receive(0, '{"type":"submission","hole":1,"source":[]}', 1.0)
    assert [type(e) for e in effects] == [Refuse, Observe] and effects[1] == Observe(0, True, 2.0)
    assert c.tick(2.9) == [] and c.tick(3.0) == [PlayFallback(0, "timeout")]
    assert c.done and c.seats[0].accepted is None and len(c.seats[0].errors) == 2
    absent = HoleCollector(2, 0.0, 10.0, 2.0, (False,), (True,), intake=accept_submission)
    assert absent.open() == [PlayFallback(0, "disconnected")] and absent.done
    with pytest.raises(ValueError, match="one entry per seat"):
        HoleCollector(1, 0.0, 1.0, 1.0, (True,), (False, False))


def _cogolf(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", "golf", *args],
                          capture_output=True, text=True, timeout=120)


def test_score_command_with_attempt_folder(tmp_path: Path) -> None:
    subs = tmp_path / "subs"
    (subs / "palindrome").mkdir(parents=True)
    (subs / "reverse-string.py").write_text("f=lambda s:s[::-1]")
    (subs / "palindrome" / "1.py").write_text("f=lambda s:True")
    (subs / "palindrome" / "2.py").write_text("f=lambda s:s==s[::-1]")
    (subs / "sum-digits.py").write_text("f=lambda n:(")
    done = _cogolf("score", "--course", "python", "--model", "m1", str(subs),
                   "--results", str(tmp_path / "res"))
    assert done.returncode == 0, done.stderr
    assert "Syntax error" in done.stdout and "No submission" in done.stdout
    doc = json.loads(next((tmp_path / "res").glob("m1.python.*.json")).read_text())
    by_hole = {h["hole"]: h for h in doc["holes"]}
    assert by_hole["palindrome"]["attempt"] == 1 and by_hole["palindrome"]["status"] == "passed"
    assert doc["totals"]["holes_passed"] == 2 and doc["totals"]["official_bytes"] == 18 + 21
    bad = _cogolf("score", "--course", "python", "--model", "m1", str(tmp_path / "nope"))
    assert bad.returncode == 2 and "not a directory" in bad.stderr
