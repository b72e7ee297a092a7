"""The solo-match core (retry, fallback) and the score/play commands end to end."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

from cogolf.golf.courses import get_course
from cogolf.golf.holes import HoleSet
from cogolf.golf.runners.base import DEFAULT_LIMITS
from cogolf.golf.solo import SoloMatch

SOLUTIONS = Path(__file__).with_name("solutions")


def test_observation_retry_and_fallback(holes: HoleSet) -> None:
    match = SoloMatch(get_course("rust"), holes, DEFAULT_LIMITS, deadline_seconds=5.0)
    obs = match.next_observation()
    assert obs["hole"] == "reverse-string" and obs["signature"].startswith("fn f(s: String)")
    assert obs["public_tests"][0] == {"args": ["hello"], "expect": "olleh"}
    assert "private" not in json.dumps(obs)
    assert match.receive({"source": "fn f(s:String)->String{s}"})["bytes"] == 25
    retry = match.receive({"src": 1})
    assert retry["type"] == "golf_retry" and "$.source" in retry["error"]
    assert match.next_observation()["error"] == retry["error"]
    assert match.receive("junk")["type"] == "golf_fallback"
    assert match.sources["sum-digits"] is None
    assert match.deadline_passed()["type"] == "golf_fallback"
    assert match.index == 3


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


def test_play_command_with_file_policy(tmp_path: Path) -> None:
    policy = tmp_path / "bot.py"
    policy.write_text(
        "import pathlib\n"
        f"ROOT = pathlib.Path({str(SOLUTIONS / 'python')!r})\n"
        "def play(obs):\n"
        "    if obs['hole'] == 'flatten':\n"
        "        return {'oops': 1}\n"
        "    if obs['hole'] == 'levenshtein':\n"
        "        return None\n"
        "    return {'source': (ROOT / obs['file_name']).read_text()}\n"
    )
    replay = tmp_path / "golf.ndjson"
    done = _cogolf("play", "--course", "python", "--bot", f"{policy}:play", "--model", "bot",
                   "--replay", str(replay), "--results", str(tmp_path / "res"))
    assert done.returncode == 0, done.stderr
    lines = [json.loads(x) for x in replay.read_text().splitlines()]
    assert lines[0]["type"] == "header" and lines[-1]["type"] == "result"
    kinds = [x["type"] for x in lines]
    assert kinds.count("verdict") == 18 and kinds.count("golf_retry") == 2
    assert kinds.count("golf_fallback") == 2
    assert lines[-1]["holes_passed"] == 16
    url = _cogolf("play", "--course", "python", "--bot", "ws://127.0.0.1:1/x")
    assert url.returncode == 2 and "not supported yet" in url.stderr
