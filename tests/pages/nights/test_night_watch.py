"""A night you can watch while it runs, in a real Chromium against a real `cogolf serve`.

The night's page shows the time left, the matches being played (each a live page
that follows its journal as it grows, never an "unfinished journal") and the solo
phase's results done and left; the home page lists the running night's matches; a
void match's page says void and why; a night whose every match was void is not
badged finished.
"""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest
from playwright.sync_api import expect

from .conftest import Nights, Server, shot
from .test_night_browser import PHONE, assert_inert_and_tidy, opened

pytestmark = pytest.mark.slow

VOID_CAUSE = (
    "attempt 1: PlayError: seat 1: bot exited with code 1 before connecting (b); the last "
    "lines of logs/x.b.log:\n    ModuleNotFoundError: No module named 'websockets'"
)


@pytest.fixture
def watched(nights: Nights) -> Iterator[dict[str, Any]]:
    """A running night (its progress file names this process): one match in play, its
    journal cut after its first hole started; a void match without a replay."""
    folder = nights.replays / "watched"
    folder.mkdir()
    (folder / "night.json").write_text('{"format": "cogolf-night", "name": "watched"}')
    full = (nights.replays / "real" / "real-literalist-vs-pedant.ndjson").read_bytes()
    lines = full.splitlines(keepends=True)
    journal = folder / "watched-a-vs-b.ndjson"
    journal.write_bytes(b"".join(lines[:2]))  # the header and hole 1's start
    (folder / "watched-c-vs-d.void.json").write_text(json.dumps(
        {"match_id": "watched-c-vs-d", "names": ["c", "d"], "cause": VOID_CAUSE, "attempts": 2}
    ))  # fmt: skip

    def progress(state: str = "matches", **more: Any) -> None:
        doc = {"state": state, "done": 1, "total": 6, "void": 1, "pid": os.getpid(),
               "updated_at": "t", "leaders": [], "elapsed_seconds": 30.0, "eta_seconds": 125.0,
               "playing": ["watched-a-vs-b"], "solo": None, **more}  # fmt: skip
        (folder / "progress.json").write_text(json.dumps(doc))

    progress()
    try:
        yield {"folder": folder, "journal": journal, "full": full, "progress": progress}
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def test_a_running_night_shows_its_time_left_its_matches_and_its_solo_phase(
    browser: Any, server: Server, watched: dict[str, Any]
) -> None:
    with opened(browser, f"{server.url}/nights/watched", PHONE) as page:
        assert page.locator("#progress-eta").inner_text() == "about 2:05 left"
        link = page.locator("#playing-list a")
        assert link.inner_text() == "LIVE watched-a-vs-b"
        assert link.get_attribute("href") == "/nights/watched/matches/watched-a-vs-b"
        watched["progress"]("solo", solo={"done": 2, "total": 5}, playing=[], eta_seconds=None)
        expect(page.locator("#progress-solo")).to_have_text(
            "Solo games: 2 of 5 results done, 3 left.", timeout=10_000
        )
        expect(page.locator("#progress-playing")).to_be_hidden()
        assert page.locator("#progress-eta").inner_text() == ""
        shot(page, "night-watched-phone")
        assert_inert_and_tidy(page)


def test_a_match_in_play_is_a_live_page_that_follows_its_journal(
    browser: Any, server: Server, watched: dict[str, Any]
) -> None:
    url = f"{server.url}/nights/watched/matches/watched-a-vs-b"
    with opened(browser, url, PHONE) as page:
        head = page.locator(".head-line .pill")
        assert head.inner_text().lower() == "live"  # not "unfinished journal"
        assert "in play" in page.locator("#hole-1").inner_text().lower()
        shot(page, "night-match-in-play-phone")
        watched["journal"].write_bytes(watched["full"])  # the match goes on, and ends
        expect(head).to_have_text("finished", ignore_case=True, timeout=15_000)
        assert page.locator("#match").get_attribute("data-ended") == "1"
        assert_inert_and_tidy(page, night_page=False)


def test_the_home_page_lists_the_running_nights_matches(
    browser: Any, server: Server, watched: dict[str, Any]
) -> None:
    with opened(browser, f"{server.url}/", PHONE) as page:
        link = page.locator("ul.night-live a")
        assert link.inner_text() == "LIVE watched-a-vs-b"
        assert "night watched" in page.locator("ul.night-live li").inner_text()
        link.click()
        page.wait_for_url("**/nights/watched/matches/watched-a-vs-b")
        assert page.locator(".head-line .pill").inner_text().lower() == "live"


def test_a_void_match_says_void_and_why(
    browser: Any, server: Server, nights: Nights, watched: dict[str, Any]
) -> None:
    with opened(browser, f"{server.url}/nights/watched/matches/watched-c-vs-d", PHONE) as page:
        note = page.locator(".void-note").inner_text()
        assert note.lower().startswith("void this match does not count: attempt 1: playerror")
        assert "No module named 'websockets'" in note
        assert "No replay of this match was kept." in page.locator("article").inner_text()
        shot(page, "night-void-match-phone")
        assert_inert_and_tidy(page, night_page=False)
    # A void match with a replay: its page says void too, above the match.
    shutil.copyfile(nights.replays / "real" / "real-literalist-vs-pedant.ndjson",
                    watched["folder"] / "watched-c-vs-d.ndjson")  # fmt: skip
    page_html = httpx.get(f"{server.url}/nights/watched/matches/watched-c-vs-d",
                          timeout=30).text  # fmt: skip
    assert 'class="void-note"' in page_html and "This match does not count" in page_html


def test_a_night_whose_every_match_was_void_is_not_finished(server: Server, nights: Nights):
    doc = json.loads((nights.league / "real" / "standings.json").read_text())
    doc["night"] = "voided"
    doc["games"]["cogolf"]["matches"].update(played=0, void=6)
    folder: Path = nights.league / "voided"
    folder.mkdir()
    try:
        (folder / "standings.json").write_text(json.dumps(doc))
        home = httpx.get(f"{server.url}/nights", timeout=30).text
        assert '<a class="night-name" href="/nights/voided">voided</a>\n<span class="badge ' \
               'status-void">void</span>' in home  # fmt: skip
        page = httpx.get(f"{server.url}/nights/voided", timeout=30).text
        assert 'id="night-status">void</span>' in page
    finally:
        shutil.rmtree(folder)


def test_the_combined_table_shows_each_games_own_rank(server: Server, nights: Nights):
    doc = json.loads((nights.league / "real" / "standings.json").read_text())
    doc["night"] = "combo"
    doc["combined"] = {
        "games": ["cogolf", "golf"], "rule": "the rule",
        "table": [{"rank": 1, "entrant": "a", "mean_rank": 1.5,
                   "ranks": {"cogolf": 1, "golf": 2}, "table_ranks": {"cogolf": 4, "golf": 2}}],
        "incomplete": [],
    }  # fmt: skip
    doc["games"]["golf"] = {"courses": [], "per_course": {}, "combined": [], "void": []}
    folder: Path = nights.league / "combo"
    folder.mkdir()
    try:
        (folder / "standings.json").write_text(json.dumps(doc))
        page = httpx.get(f"{server.url}/nights/combo", timeout=30).text
        combined = page.split('id="combined"', 1)[1].split("</section>", 1)[0]
        # 4th in Cogolf's own table, 1st among the complete entrants; golf 2nd in both
        assert '<td class="num">4 <span class="muted">(1)</span></td><td class="num">2</td>' \
            in combined  # fmt: skip
    finally:
        shutil.rmtree(folder)


@pytest.fixture(scope="module")
def golf_replay(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real live golf replay (the reference's sources, in process)."""
    from .conftest import ROOT, cogolf

    out = tmp_path_factory.mktemp("golf-live")
    run = cogolf("golf", "play", "--course", "python", "--bot",
                 "tests/games/golf/policies.py:reference", "--in-process", "--replays",
                 str(out), "--results", str(out / "results"), "--match-id", "golf-live-1",
                 cwd=ROOT)  # fmt: skip
    assert run.returncode == 0, run.stderr
    return out / "golf-live-1.ndjson"


def test_golf_has_a_tab_per_course_and_its_holes_say_their_numbers(
    browser: Any, server: Server, nights: Nights, golf_replay: Path, tmp_path: Path
) -> None:
    """Hole scores, tests and bytes visible without hovering; an LLM entrant's live play
    links each hole to its source and replay, on the server and in a published site."""
    folder = nights.replays / "golfy"
    shutil.copytree(nights.replays / "hostile", folder)
    live = folder / "llm" / "golf"
    (live / "plain" / "python").mkdir(parents=True)
    shutil.copyfile(golf_replay, live / golf_replay.name)
    (live / "plain" / "python" / ".complete").write_text(golf_replay.name + "\n")
    doc = json.loads((nights.league / "hostile" / "standings.json").read_text())
    doc["night"] = "golfy"
    doc["games"]["golf"]["courses"] = ["python", "racket"]
    doc["games"]["golf"]["per_course"]["racket"] = []
    (nights.league / "golfy").mkdir()
    (nights.league / "golfy" / "standings.json").write_text(json.dumps(doc))
    (folder / "night.json").write_text('{"format": "cogolf-night", "name": "golfy"}')
    try:
        with opened(browser, f"{server.url}/nights/golfy#golf", PHONE) as page:
            python, racket = page.locator("#golf-python"), page.locator("#golf-racket")
            assert python.is_visible() and not racket.is_visible()
            row = page.locator("#golf-python tr", has=page.locator('a:text-is("plain")'))
            cell = row.locator("td.hole").first
            shown = cell.inner_text().split("\n")  # score, tests, bytes: no hover needed
            assert len(shown) == 3 and "/" in shown[1] and shown[2].endswith(" B"), shown
            number, name = page.locator("#golf-python th.hole").first.inner_text().split("\n")
            assert number == "1" and name  # the hole's name in its column, not in a tooltip
            shot(page, "night-golf-tabs-phone")
            page.locator('label[for="golf-tab-2"]').click()
            assert racket.is_visible() and not python.is_visible()
            page.locator('label[for="golf-tab-1"]').click()
            cell.locator("a").click()
            page.wait_for_url("**/nights/golfy/golf/plain/python#hole-1")
            assert "source" in page.locator("#hole-1").inner_text()
            assert_inert_and_tidy(page, night_page=False)
        site = tmp_path / "site"
        from .conftest import cogolf

        run = cogolf("league", "publish", str(folder), "--out", str(site), cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        assert (site / "golf" / "plain.python.html").is_file()
        assert 'href="golf/plain.python.html#hole-1"' in (site / "index.html").read_text()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(nights.league / "golfy", ignore_errors=True)


def test_a_file_entrants_golf_cells_link_to_its_result_hole_by_hole(
    browser: Any, server: Server, nights: Nights, tmp_path: Path
) -> None:
    """An entrant that handed in files has no live replay: each of its golf cells links to
    its result's page (the hole's status, why it failed, its public tests and what the
    code returned), its sources not published; a file of another name or model is none."""
    folder = nights.replays / "golffiles"
    shutil.copytree(nights.replays / "hostile", folder)
    golf = folder / "golf"
    doc = json.loads((golf / "literalist.python.hostile.json").read_text())
    first = doc["holes"][0]
    first.update(status="failed", reason="wrong answer", score=first["bytes"] + 500.0,
                 detail="<img src=x onerror=window.__pwned=4>", tests=[
                     {"name": "public-0", "passed": False, "status": "wrong", "got": "'olleh'"},
                     {"name": "private-0", "passed": True, "status": "pass", "got": "secret"}])
    (golf / "literalist.python.hostile.json").unlink()
    (golf / "literalist.python.golffiles.json").write_text(json.dumps(doc))
    (golf / "ghost.python.golffiles.json").write_text(json.dumps(doc))  # literalist's model
    standings = json.loads((nights.league / "hostile" / "standings.json").read_text())
    standings["night"] = "golffiles"
    (nights.league / "golffiles").mkdir()
    (nights.league / "golffiles" / "standings.json").write_text(json.dumps(standings))
    (folder / "night.json").write_text('{"format": "cogolf-night", "name": "golffiles"}')
    base = f"{server.url}/nights/golffiles/golf"
    try:
        with opened(browser, f"{server.url}/nights/golffiles#golf") as page:
            row = page.locator("#golf-python tr", has=page.locator('a:text-is("literalist")'))
            assert row.locator("td.hole a").count() == len(doc["holes"])
            # "plain"'s result is named for another night: no page of it, no link.
            plain = page.locator("#golf-python tr", has=page.locator('td.name:text-is("plain")'))
            assert plain.count() == 1 and plain.locator("a").count() == 0
            row.locator("td.hole a").first.click()
            page.wait_for_url("**/nights/golffiles/golf/literalist/python#hole-1")
            hole = page.locator("#hole-1").inner_text()
            assert "failed" in hole and "wrong answer" in hole and "onerror" in hole
            assert "public-0" in hole and "'olleh'" in hole and "private 1/1 passed" not in hole
            assert "secret" not in hole  # a private test's value never shows
            assert "source in the entrant's folder (not published)" in hole
            head = page.locator("header.match-head").inner_text()
            assert "its sources stay in its folder" in head
            shot(page, "night-golf-file-result")
            assert_inert_and_tidy(page, night_page=False)
        for who in ("ghost", "plain", "nobody"):
            assert httpx.get(f"{base}/{who}/python", timeout=30).status_code == 404
        site = tmp_path / "site"
        from .conftest import cogolf

        run = cogolf("league", "publish", str(folder), "--out", str(site), cwd=tmp_path)
        assert run.returncode == 0, run.stderr
        published = (site / "golf" / "literalist.python.html").read_text()
        assert "wrong answer" in published and "secret" not in published
        assert 'href="golf/literalist.python.html#hole-1"' in (site / "index.html").read_text()
        assert not (site / "golf" / "ghost.python.html").exists()
    finally:
        shutil.rmtree(folder, ignore_errors=True)
        shutil.rmtree(nights.league / "golffiles", ignore_errors=True)
