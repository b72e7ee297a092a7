"""A bot's own fallback is shown as a fallback everywhere a user looks.

One `cogolf play` over real websockets with a `cogolf bot` whose policy raises on
hole 1, hangs on hole 2 and returns junk on hole 3, and one `cogolf golf play`
whose policy does the same on a golf course: the scorecard, `--explain`,
`--verify` and the match page (a `--html` file in Chromium) all say which holes
were not the bot's play, why, and count them.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from tests.pages.conftest import CHROMIUM, ROOT, journal_records
from tests.pages.test_browser import DESKTOP, PHONE, Watched, visible_hole
from tests.stacks import needs

POLICIES = "tests/bots/misbehaving.py"


def cogolf(*argv: str | Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *map(str, argv)],
        capture_output=True, text=True, cwd=ROOT, timeout=300, stdin=subprocess.DEVNULL,
    )  # fmt: skip


@pytest.fixture(scope="module")
def played(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    out = tmp_path_factory.mktemp("own-fallbacks")
    cogolf_run = cogolf(
        "play", "--seat0", f"{POLICIES}:by_hole", "--seat1", "literalist", "--holes", "4",
        "--hole-deadline", "2", "--retry-deadline", "1", "--replays", out / "cogolf", "--explain",
    )  # fmt: skip
    assert cogolf_run.returncode == 0, cogolf_run.stderr
    golf_run = cogolf(
        "golf", "play", "--course", "python", "--bot", f"{POLICIES}:golf_by_hole",
        "--hole-deadline", "2", "--retry-deadline", "1", "--replays", out / "golf",
        "--results", out / "results",
    )  # fmt: skip
    assert golf_run.returncode == 0, golf_run.stderr
    (cogolf_replay,) = (out / "cogolf").glob("*.ndjson")
    (golf_replay,) = (out / "golf").glob("*.ndjson")
    return {
        "out": out,
        "cogolf": cogolf_run.stdout,
        "cogolf_replay": cogolf_replay,
        "golf": golf_run.stdout,
        "golf_replay": golf_replay,
    }


RAISED = re.compile(r"RuntimeError: policy bug \(at misbehaving\.py:\d+ in by_hole\)")
JUNK = "the policy's play would be refused: Expected `str`, got `int` - at `$.impl`"


@pytest.mark.slow
def test_the_scorecard_and_explain_name_every_own_fallback(played) -> None:
    text = played["cogolf"]
    for hole, cause in ((1, "policy_raised"), (2, "policy_timeout"), (3, "policy_invalid")):
        assert re.search(rf"^\s+{hole}\s.*Ash FALLBACK\(own: {cause}\)$", text, re.M), text
    assert re.search(r"^\s+4\s.*\d$", text, re.M)  # hole 4 was the policy's own
    assert (
        "Ash    breaches 0, breaches taken 0, par fails" in text
        and "fallbacks 3 (policy_invalid 1, policy_raised 1, policy_timeout 1)" in text
    )
    # --explain: the cause and the bot's own words, under the bot's name
    assert "FALLBACK (policy_raised): not Ash's play; its bot sent the literalist's play" in text
    assert RAISED.search(text) and JUNK in text
    assert "the policy did not answer within 1.5 s" in text
    assert "Ash played the fallback on 3 holes" in text
    assert "would refuse" not in text


@pytest.mark.slow
def test_an_own_fallback_is_recorded_and_the_replay_verifies(played) -> None:
    records = journal_records(played["cogolf_replay"])
    mine = [r for r in records if r["kind"] == "submission" and r["slot"] == 0]
    assert [r["source"] for r in mine] == ["seat_fallback"] * 3 + ["seat"]
    assert all(r["attempts"] == 1 and r["errors"] == [] for r in mine)  # in time, no retry
    assert records[-1]["fallbacks"] == [3, 0]
    checked = cogolf("replay", played["cogolf_replay"], "--verify")
    assert checked.returncode == 0, checked.stderr
    assert "verified: 4 holes re-resolved" in checked.stdout


@pytest.mark.slow
def test_golf_own_fallbacks_are_counted_and_explained(played) -> None:
    text = played["golf"]
    assert re.search(r"^reverse-string .*FALLBACK \(policy_raised\): No submission$", text, re.M)
    assert re.search(r"^sum-digits .*FALLBACK \(policy_invalid\): No submission$", text, re.M)
    assert re.search(r"^count-vowels .*FALLBACK \(policy_timeout\): No submission$", text, re.M)
    assert re.search(r"^palindrome .*missing\s+No submission$", text, re.M)  # a plain pass
    assert "fallbacks: 3 holes were not the bot's own play" in text
    subs = [r for r in journal_records(played["golf_replay"]) if r["kind"] == "submission"]
    assert [r["origin"] for r in subs[:4]] == ["seat_fallback"] * 3 + ["seat"]
    assert subs[0]["fallback_detail"].startswith("ValueError: no golf today (at misbehaving.py:")
    (result,) = (played["out"] / "results").glob("*.json")
    assert '"fallbacks":3' in result.read_text().replace(" ", "")
    explained = cogolf("replay", played["golf_replay"], "--explain")
    assert explained.returncode == 0, explained.stderr
    assert "FALLBACK (the bot's own, policy_raised)" in explained.stdout
    assert "the bot passed this hole: ValueError: no golf today" in explained.stdout


def _page(played: dict[str, Any], key: str, tmp_path: Path) -> Path:
    out = tmp_path / f"{key}.html"
    made = cogolf("replay", played[f"{key}_replay"], "--html", out)
    assert made.returncode == 0, made.stderr
    return out


@pytest.mark.slow
@needs(CHROMIUM.exists(), "Debian's chromium")
def test_the_match_pages_show_the_chip_and_the_words(
    browser: Any, played, tmp_path: Path, artifacts
) -> None:
    page = _page(played, "cogolf", tmp_path)
    for viewport, name in ((DESKTOP, "own-fallback"), (PHONE, "own-fallback-phone")):
        w = Watched(browser, viewport, "file://")
        try:
            w.page.goto(page.as_uri() + "#hole-1")
            assert visible_hole(w.page) == [1]
            line = w.page.inner_text("#hole-1 .play.s0 .fallback-line")
            assert "FALLBACK · policy_raised" in line and RAISED.search(line), line
            assert "its bot sent the literalist's play in its place" in line
            assert w.page.locator("#hole-1 .play.s1 .fallback-line").count() == 0
            w.page.keyboard.press("ArrowRight")
            w.page.keyboard.press("ArrowRight")
            assert JUNK in w.page.inner_text("#hole-3 .play.s0 .fallback-line")
            end = w.page.inner_text(".endcard")
            assert "Ash fallbacks: 1 × policy_invalid, 1 × policy_raised, 1 × policy_timeout" in end
            w.assert_fits()
            w.shot(artifacts, name)
            w.assert_clean()
        finally:
            w.close()
    golf = _page(played, "golf", tmp_path)
    w = Watched(browser, PHONE, "file://")
    try:
        w.page.goto(golf.as_uri())
        line = w.page.inner_text("#hole-1 .fallback-line")
        assert "FALLBACK · policy_raised" in line and "a pass (no submission)" in line
        assert "ValueError: no golf today" in line
        w.assert_fits()
        w.shot(artifacts, "own-fallback-golf-phone")
        w.assert_clean()
    finally:
        w.close()
