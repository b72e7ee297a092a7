"""The night pages in a real Chromium: a real night on a real `cogolf serve`, a hostile
night whose names try to run script, a running night updating itself, the published
site from disk, and a phone's width. Screenshots are kept as test artifacts."""

from __future__ import annotations

import json
import os
import shutil
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any

from playwright.sync_api import expect

from .conftest import HOSTILE, Nights, Server, cogolf, needs_chromium, shot

pytestmark = needs_chromium
PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1280, "height": 900}
WATCH = """
window.__violations = [];
document.addEventListener("securitypolicyviolation",
    (e) => window.__violations.push(e.violatedDirective + " " + e.blockedURI));
"""


@contextmanager
def opened(browser: Any, url: str, viewport: dict[str, int] = DESKTOP) -> Iterator[Any]:
    ctx = browser.new_context(viewport=viewport)
    page = ctx.new_page()
    page.errors = []
    page.on("pageerror", lambda e: page.errors.append(str(e)))
    page.on("dialog", lambda d: (page.errors.append(f"dialog {d.message}"), d.dismiss()))
    page.on(
        "console",
        lambda m: (
            m.type == "error"
            and not m.location.get("url", "").endswith("favicon.ico")
            and page.errors.append(m.text)
        ),
    )
    page.add_init_script(WATCH)
    page.goto(url)
    try:
        yield page
    finally:
        ctx.close()


def assert_inert_and_tidy(page: Any, night_page: bool = True) -> None:
    """Nothing of the bots' text ran, no markup came from it, and nothing overflows the page;
    on a night page a long name wraps within its column."""
    assert page.evaluate("window.__pwned") is None
    assert page.evaluate("document.querySelectorAll('[onerror],[onload],img[src=x]').length") == 0
    assert page.evaluate("window.__violations") == []
    assert page.errors == []
    width = page.evaluate("window.innerWidth")
    assert page.evaluate("document.documentElement.scrollWidth") <= width
    if not night_page:
        return
    widest = page.evaluate(
        "Math.max(0, ...[...document.querySelectorAll('td.name, th.name')]"
        ".map(e => e.getBoundingClientRect().width))"
    )
    assert widest <= 16 * 16


def test_real_night_page_and_a_match_link(browser: Any, server: Server):
    with opened(browser, f"{server.url}/nights/real") as page:
        assert page.locator("h1").inner_text() == "real"
        names = page.locator("table.standings td.name").all_inner_texts()
        assert sorted(names) == ["literalist", "parrot", "pedant"]
        assert page.locator("table.standings svg.bar rect.ci").count() == 3
        assert page.locator("table.h2h td").count() == 9
        shot(page, "night-real-desktop")
        link = page.locator("table.matches a").first
        href = link.get_attribute("href")
        link.click()
        page.wait_for_url(f"**{href}")
        # the match renderer's page: both seats with their real names, one hole
        seats = page.locator("h1.board .seat .real").all_inner_texts()
        assert len(seats) == 2 and set(seats) <= {"literalist", "parrot", "pedant"}
        assert page.locator("section.hole").count() == 1
        shot(page, "night-real-match")
        assert_inert_and_tidy(page, night_page=False)


def test_hostile_names_are_text_and_the_layout_holds(browser: Any, server: Server):
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        with opened(browser, f"{server.url}/nights/hostile", viewport) as page:
            shown = page.locator("table.standings td.name").all_inner_texts()
            assert sorted(shown) == sorted(HOSTILE)
            assert page.locator("table.h2h td").count() == len(HOSTILE) ** 2
            if label == "desktop":
                _agents_spending_shown(page)
            shot(page, f"night-hostile-{label}")
            assert_inert_and_tidy(page)
            page.locator("table.matches a").nth(7).click()
            page.wait_for_selector("h1.board .seat .real")
            assert_inert_and_tidy(page, night_page=False)
            shown = page.locator("h1.board .seat .real").all_inner_texts()
            assert any(n in HOSTILE for n in shown)


def _agents_spending_shown(page: Any) -> None:
    """Some entrants of the synthetic night are agents: each of their attempts shows its
    status, tokens, cost and time, and the cost column their total; the others' nothing.
    (The names that cannot be file names have no solo results at all.)"""
    for table, attempts, total in (("#project", 3, "0.0375"), ("#commit0", 1, "0.0125")):
        rows = page.locator(f"{table} tbody tr")
        by_name = {rows.nth(i).locator("td.name").inner_text(): rows.nth(i)
                   for i in range(rows.count())}
        plain = by_name["plain"]  # an agent with 3 attempts (every fifth entrant is short)
        expect(plain.locator("td.cost")).to_have_text(total)
        spent = [t for t in plain.locator(".why").all_inner_texts() if "agent" in t]
        assert len(spent) == attempts, spent
        assert all(t.endswith("agent ok, 1545 tok, cost 0.0125, 42 s") for t in spent), spent
        literalist = by_name["literalist"]  # files handed in: nothing spent, nothing shown
        expect(literalist.locator("td.cost")).to_have_text("–")
        assert not any("agent" in t for t in literalist.locator(".why").all_inner_texts())


def test_too_few_matches_is_said_not_drawn(browser: Any, server: Server, nights: Nights):
    """Two matches cannot place an entrant: the page says so in place of a bar, and the
    wide intervals behind it do not squash the chart of those it can place."""
    doc = json.loads((nights.league / "short" / "standings.json").read_text())
    rated = {r["name"]: r for r in doc["games"]["cogolf"]["ratings"]["entrants"]}
    assert {n: r["too_few_matches"] for n, r in rated.items()} == {
        "literalist": False, "rookie": True, "newbie": True,
    }  # fmt: skip
    assert all(rated[n]["high"] - rated[n]["low"] > 800 for n in ("rookie", "newbie"))
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        with opened(browser, f"{server.url}/nights/short", viewport) as page:
            rows = page.locator("table.standings tbody tr")
            expect(rows).to_have_count(3)
            for i in range(3):
                name = rows.nth(i).locator("td.name").inner_text()
                few = rows.nth(i).locator(".too-few")
                if name == "literalist":
                    assert few.count() == 0 and rows.nth(i).locator("rect.ci").count() == 1
                else:
                    expect(few).to_have_text("too few matches")
                    assert few.is_visible() and rows.nth(i).locator("svg.bar").count() == 0
                    shown = rows.nth(i).locator(".rating-num").inner_text()
                    assert shown == f"{rated[name]['rating']:.0f}"
            legend = page.locator("#standings .legend").inner_text()
            assert "Under 4 scored matches" in legend
            # The scale is set by the rows drawn: ticks span a few hundred points, not
            # the thousands of the too-few intervals.
            ticks = [float(t) for t in page.locator("thead svg.bar text").all_text_contents()]
            assert ticks and max(ticks) - min(ticks) < 200
            shot(page, f"night-short-{label}")
            assert_inert_and_tidy(page)


def test_a_running_night_updates_itself(browser: Any, server: Server, nights: Nights):
    folder = nights.replays / "runs"
    folder.mkdir(exist_ok=True)
    (folder / "night.json").write_text('{"format": "cogolf-night", "name": "runs"}')

    def progress(done: int, state: str = "matches") -> None:
        doc = {"state": state, "done": done, "total": 6, "void": 0, "pid": os.getpid(),
               "updated_at": f"t{done}", "leaders": [{"name": HOSTILE[1], "points": 3 * done,
                                                      "margin": done}]}  # fmt: skip
        (folder / "progress.json").write_text(json.dumps(doc))

    progress(1)
    shutil.copyfile(nights.replays / "real" / "real-literalist-vs-pedant.ndjson",
                    folder / "runs-a-vs-b.ndjson")  # fmt: skip
    with opened(browser, f"{server.url}/nights/runs", PHONE) as page:
        assert page.locator("#progress-text").inner_text() == "1 of 6 matches"
        assert page.locator("ul.recent a").inner_text() == "runs-a-vs-b"
        assert page.locator("#standings").count() == 0
        progress(4)
        expect(page.locator("#progress-text")).to_have_text("4 of 6 matches", timeout=10_000)
        assert page.locator("#progress-leaders .name").inner_text() == HOSTILE[1]
        assert page.evaluate("document.getElementById('progress-bar').value") == 4
        shot(page, "night-running-phone")
        assert_inert_and_tidy(page)
        (nights.league / "runs").mkdir(exist_ok=True)
        shutil.copyfile(nights.league / "real" / "standings.json",
                        nights.league / "runs" / "standings.json")  # fmt: skip
        progress(6, "finished")
        page.wait_for_selector("#standings", timeout=10_000)
        assert page.locator("#night-status").inner_text() == "finished"
        assert_inert_and_tidy(page)


def test_published_site_from_disk(browser: Any, nights: Nights, tmp_path: Path):
    site = tmp_path / "site"
    run = cogolf("league", "publish", str(nights.replays / "hostile"), "--out", str(site),
                 "--league-dir", str(nights.league), cwd=nights.root)  # fmt: skip
    assert run.returncode == 0, run.stderr
    for label, viewport in (("desktop", DESKTOP), ("phone", PHONE)):
        with opened(browser, (site / "index.html").as_uri(), viewport) as page:
            shown = page.locator("table.standings td.name").all_inner_texts()
            assert sorted(shown) == sorted(HOSTILE)
            # The stylesheet loaded from disk under the page's policy.
            assert page.evaluate("document.styleSheets.length") == 2
            shot(page, f"published-hostile-{label}")
            assert_inert_and_tidy(page)
            page.locator("table.matches a").first.click()
            page.wait_for_selector("h1.board .seat .real")
            assert page.url.startswith((site / "matches").as_uri())
            assert_inert_and_tidy(page, night_page=False)
            page.locator("header.site a.back").click()
            page.wait_for_selector("#standings")


def test_bench_pages_prints_its_numbers(tmp_path: Path):
    args = ["--entrants", "4", "--loads", "1", "--spectators", "2", "--rounds", "1"]
    run = cogolf("bench", "pages", *args, "--matches", "1", "--holes", "1", "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    assert doc["pages"]["entrants"] == 4 and doc["pages"]["matches"] == 12
    for t in doc["pages"]["chromium"].values():
        assert t["full_render_ms"] > 0
    assert doc["server"]["spectators"]["errors"] == 0
    assert doc["server"]["spectators"]["page_loads"] >= 2
    assert not doc["server"]["with"]["incomplete"] and not doc["server"]["without"]["incomplete"]


def test_hostile_leaders_polled_by_night_js_stay_text(browser: Any, server: Server, nights: Nights):
    """A progress file rewritten under a running page with every hostile name, a name of
    100,000 characters and markup in its state and time: night.js writes text only, the
    server cuts long texts, and the phone layout holds."""
    folder = nights.replays / "polled"
    folder.mkdir(exist_ok=True)
    (folder / "night.json").write_text('{"format": "cogolf-night", "name": "polled"}')

    def progress(done: int, names: list[str]) -> None:
        leaders = [{"name": n, "points": i, "margin": -i} for i, n in enumerate(names)]
        doc = {"state": "matches", "done": done, "total": 9, "pid": os.getpid(),
               "updated_at": "<img src=x onerror=window.__pwned=9>",
               "leaders": leaders}  # fmt: skip
        (folder / "progress.json").write_text(json.dumps(doc))

    progress(1, ["plain"])
    with opened(browser, f"{server.url}/nights/polled", PHONE) as page:
        progress(2, [*HOSTILE, "W" * 100_000])
        expect(page.locator("#progress-text")).to_have_text("2 of 9 matches", timeout=10_000)
        shown = page.locator("#progress-leaders .name").all_inner_texts()
        assert shown[: len(HOSTILE)] == [n[:200] for n in HOSTILE]
        assert len(shown) == len(HOSTILE) + 1
        assert len(shown[-1]) == 200
        assert page.locator("#progress-updated").inner_text().startswith("<img")
        shot(page, "night-polled-hostile-phone")
        assert_inert_and_tidy(page)
