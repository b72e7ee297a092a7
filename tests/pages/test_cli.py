"""`cogolf replay FILE --explain / --html` and `cogolf play --explain`, run as a user would."""

from __future__ import annotations

import base64
import hashlib
import html
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cogolf.bots.policy import load_policy
from cogolf.runtime.seats import InProcessSeat
from tests.pages.conftest import HOSTILE_NAMES, ROOT, journal_records
from tests.replay.helpers import play_in_process


def cogolf(*argv: str | Path, cwd: Path = ROOT) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *map(str, argv)],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=120,
    )


@pytest.fixture(scope="session")
def drawn(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Two literalists on seed 2: identical plays, no breach, a draw."""
    path = tmp_path_factory.mktemp("drawn") / "drawn-1.ndjson"
    seats = [InProcessSeat(i, load_policy("literalist")) for i in range(2)]
    return play_in_process(path, seed=2, holes=2, seats=seats)


def test_explain_tells_every_hole_with_full_headers(finished: dict[str, Any]) -> None:
    out = cogolf("replay", finished["path"], "--explain")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    records = journal_records(finished["path"])
    verdicts = [r for r in records if r["kind"] == "test_verdict"]
    # headers are never cut, whatever the aliases' lengths
    assert re.search(r"#\s+test\s+legality\s+shot\s+expected\s+returned\s+why", text)
    for v in verdicts:
        if v["legal"] and v["outcome"] == "breach" and len(v["observed"]) < 30:
            assert re.search(rf"breached\s+.*{re.escape(v['observed'])}", text)
    assert any(not v["legal"] for v in verdicts)
    illegal = next(v for v in verdicts if not v["legal"])
    assert f"{illegal['legal_reason']}  " in text and "not fired" in text
    par = [r for r in records if r["kind"] == "par_result"]
    assert f"par cases failed {par[0]['par_fails']} of {par[0]['par_total']}" in text
    # the fallback of hole 1 in words, not a Python dict
    assert "FALLBACK: Ash's own play was not used; the fallback was played (" in text
    assert "attempt 1 refused: malformed" in text
    assert "Ash played the fallback on 1 hole: 1 time " in text and "{'" not in text
    assert HOSTILE_NAMES[0] in text  # names after the end, as plain text
    assert "ambiguity: " in text and "Killer test: " in text


def test_explain_of_a_drawn_match_and_of_an_unfinished_journal(drawn: Path, tmp_path: Path) -> None:
    out = cogolf("replay", drawn, "--explain")
    assert out.returncode == 0, out.stderr
    assert "Killer test: NO BREACH — DRAWN MATCH" in out.stdout
    # A journal cut after hole 1: a match under way shows what both seats may know.
    lines = drawn.read_bytes().splitlines(keepends=True)
    first_score = next(i for i, line in enumerate(lines) if b'"kind":"hole_score"' in line)
    cut = tmp_path / "cut-1.ndjson"
    cut.write_bytes(b"".join(lines[: first_score + 1]))
    out = cogolf("replay", cut, "--explain")
    assert out.returncode == 0, out.stderr
    assert "unfinished: 1 of 2 holes resolved" in out.stdout
    assert "literalist" not in out.stdout and "ambiguity" not in out.stdout.split("Hole 1")[1]
    page = tmp_path / "cut.html"
    assert cogolf("replay", cut, "--html", page).returncode == 0
    assert "unfinished journal" in page.read_text() and "literalist" not in page.read_text()


def _hashes(policy: str, kind: str) -> list[str]:
    found = re.search(rf"{kind}-src ([^;]+)", html.unescape(policy))
    assert found
    return found.group(1).split()


def test_html_is_one_self_contained_file_allowed_by_its_hashes(
    finished: dict[str, Any], tmp_path: Path
) -> None:
    out_file = tmp_path / "match.html"
    out = cogolf("replay", finished["path"], "--html", out_file)
    assert out.returncode == 0, out.stderr
    page = out_file.read_text()
    policy = re.search(r'http-equiv="Content-Security-Policy" content="([^"]+)"', page)
    assert policy
    script = re.search(r'<script type="module">(.*?)</script>', page, re.S)
    style = re.search(r"<style>(.*?)</style>", page, re.S)
    assert script and style and page.count("<script") == 1

    def sha(text: str) -> str:
        return "'sha256-" + base64.b64encode(hashlib.sha256(text.encode()).digest()).decode() + "'"

    assert _hashes(policy.group(1), "script") == [sha(script.group(1))]
    assert _hashes(policy.group(1), "style") == [sha(style.group(1))]
    assert "unsafe-inline" not in policy.group(1)
    assert not re.search(r"(src|href)=\"(https?:)?//", page)  # nothing from outside
    assert "&lt;img src=x onerror=" in page and "<img src=x" not in page


def test_bad_invocations_say_what_is_wrong(finished: dict[str, Any], tmp_path: Path) -> None:
    both = cogolf("replay", finished["path"], "--verify", "--explain")
    assert both.returncode == 2 and "--verify cannot be combined" in both.stderr
    missing = cogolf("replay", tmp_path / "nope.ndjson", "--html", tmp_path / "x.html")
    assert missing.returncode == 2 and "cannot read" in missing.stderr
    assert not (tmp_path / "x.html").exists()
    junk = tmp_path / "junk.ndjson"
    junk.write_text('{"kind":"header","game":"golf"}\n[1,2]\n')
    bad = cogolf("replay", junk, "--explain")
    assert bad.returncode == 2 and f"{junk}:2: a record must be a JSON object" in bad.stderr
    nowhere = cogolf("replay", finished["path"], "--html", tmp_path / "no" / "dir" / "x.html")
    assert nowhere.returncode == 2 and "cannot write" in nowhere.stderr
    assert "Traceback" not in bad.stderr + nowhere.stderr + missing.stderr


def test_golf_replay_explains_bytes_tests_and_private_counts(
    golf: dict[str, Any], tmp_path: Path
) -> None:
    out = cogolf("replay", golf["path"], "--explain", "--html", tmp_path / "golf.html")
    assert out.returncode == 0, out.stderr
    text = out.stdout
    assert re.search(r"hole\s+key\s+bytes\s+public\s+private\s+score\s+total\s+status", text)
    assert re.search(r"1\s+reverse-string\s+\d+\s+0/3\s+0/9\s+\d+", text)
    assert re.search(r"2\s+sum-digits\s+0\s+-\s+-\s+1000\s+", text)
    result = journal_records(golf["path"])[-1]
    assert f"finished (complete): {result['score']:g} strokes" in text
    page = (tmp_path / "golf.html").read_text()
    assert "private 9/9 passed" in page and "&lt;/script&gt;" in page
    plain = cogolf("replay", golf["path"])  # golf has no other scorecard
    assert plain.returncode == 0 and plain.stdout == text
    verify = cogolf("replay", golf["path"], "--verify")
    assert verify.returncode == 2 and "is a golf journal" in verify.stderr


def test_play_explain_prints_the_explanation_after_the_scorecard(tmp_path: Path) -> None:
    out = cogolf(
        "play", "--in-process", "--holes", "1", "--seed", "3", "--explain",
        "--replays", tmp_path, "--match-id", "explained-1",
    )  # fmt: skip
    assert out.returncode == 0, out.stderr
    scorecard, explanation = out.stdout.split("Cogolf match explained-1:", 1)
    assert "killer test" in scorecard
    assert "Hole 1: " in explanation and "legality" in explanation
    assert json.loads((tmp_path / "explained-1.ndjson").read_text().splitlines()[-1])["kind"] == (
        "result"
    )
