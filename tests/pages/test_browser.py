"""The pages in a real browser (Debian's Chromium driven by Playwright) against a real
`cogolf serve`: a live match moving hole by hole, stepping a finished match with the
keyboard, a `--html` file opened from disk, a phone-width screen, and hostile content
that must neither run nor break the layout. Every page is kept as a screenshot."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.pages.conftest import CHROMIUM, HOSTILE_NAMES, ROOT, Served
from tests.stacks import needs

pytestmark = needs(CHROMIUM.exists(), "Debian's chromium")

if os.environ.get("CI"):
    from playwright.sync_api import Browser, Page  # CI: missing fails
else:
    sync_api = pytest.importorskip("playwright.sync_api")
    Browser, Page = sync_api.Browser, sync_api.Page

PHONE = {"width": 390, "height": 844}
DESKTOP = {"width": 1200, "height": 900}


class Watched:
    """A page with everything a test must see go wrong recorded: dialogs, script errors,
    requests leaving the server (or the file) the page came from."""

    def __init__(self, browser: Browser, viewport: dict[str, int], origin: str) -> None:
        self.context = browser.new_context(viewport=viewport)
        self.page: Page = self.context.new_page()
        self.dialogs: list[str] = []
        self.errors: list[str] = []
        self.outside: list[str] = []
        self.page.on("dialog", self._dialog)
        self.page.on("pageerror", lambda exc: self.errors.append(str(exc)))
        self.page.on(
            "request",
            lambda req: (
                None
                if req.url.startswith((origin, "data:", "ws://127.0.0.1"))
                else self.outside.append(req.url)
            ),
        )

    def _dialog(self, dialog: Any) -> None:
        self.dialogs.append(dialog.message)
        dialog.dismiss()

    def assert_clean(self) -> None:
        assert self.page.evaluate("window.__pwned") is None
        assert self.dialogs == [] and self.errors == [] and self.outside == []

    def assert_fits(self) -> None:
        """The layout holds: nothing pushes the page wider than the screen."""
        overflow = self.page.evaluate(
            "document.documentElement.scrollWidth - document.documentElement.clientWidth"
        )
        assert overflow <= 0, f"page is {overflow}px wider than the screen"

    def shot(self, folder: Path, name: str, full: bool = True) -> None:
        self.page.screenshot(path=str(folder / f"{name}.png"), full_page=full)

    def close(self) -> None:
        self.context.close()


def visible_hole(page: Page) -> list[int]:
    return page.eval_on_selector_all(
        "#match section.hole", "els => els.filter(e => e.offsetParent).map(e => +e.dataset.hole)"
    )


def test_a_live_match_updates_hole_by_hole(browser: Browser, served: Served, artifacts) -> None:
    made = served.post(seed=8, holes=3, names=["hidden-until-the-end", "the-other-one"])
    match_id = made["match_id"]
    match = Watched(browser, DESKTOP, served.url)
    index = Watched(browser, DESKTOP, served.url)
    seats = None
    try:
        match.page.goto(f"{served.url}/matches/{match_id}")
        index.page.goto(f"{served.url}/")
        row = f'#live tr[data-match-id="{match_id}"]'
        assert index.page.locator(row).count() == 1
        seats = served.seats(made)
        for k in (1, 2, 3):
            seats.step()
            match.page.wait_for_function(
                "k => document.querySelectorAll('#match .tl.resolved').length === k",
                arg=k,
                timeout=20000,
            )
            doc = httpx.get(f"{served.url}/matches/{match_id}", timeout=10).json()
            board = match.page.inner_text("#match .board .total")
            want = ":".join(f"{s:+d}".replace("-", "−") if s else "0" for s in doc["scores"])
            assert board.replace(" ", "") == want
            if k < 3:
                # following the match: the newest hole is the one shown, its deadline counted
                assert visible_hole(match.page) == [k + 1]
                countdown = f"#hole-{k + 1} .countdown"
                match.page.wait_for_function(
                    "sel => /^\\d+ s to the deadline$/"
                    ".test(document.querySelector(sel)?.textContent ?? '')",
                    arg=countdown, timeout=5000,
                )  # fmt: skip
                assert int(match.page.inner_text(countdown).split()[0]) <= 40
                assert "hidden-until-the-end" not in match.page.content()
                match.shot(artifacts, f"live-hole-{k}")
                index.page.wait_for_function(
                    "([row, want]) => document.querySelector(row + ' td:nth-child(4)')"
                    "?.textContent === want",
                    arg=[row, f"{k + 1} / 3"],
                    timeout=10000,
                )
        match.page.wait_for_selector('#match[data-ended="1"] .endcard', timeout=20000)
        assert "hidden-until-the-end" in match.page.inner_text(".board")
        # the real names large once they may be shown, the aliases small beside them
        real = match.page.locator("#match .board .seat .real").all_inner_texts()
        assert real == ["hidden-until-the-end", "the-other-one"]
        assert match.page.locator("#match .countdown").count() == 0
        match.shot(artifacts, "live-finished")
        index.page.wait_for_selector(f'#finished tr[data-match-id="{match_id}"]', timeout=10000)
        winner = index.page.inner_text(f'#finished tr[data-match-id="{match_id}"] td.winner')
        final = httpx.get(f"{served.url}/matches/{match_id}", timeout=10).json()["scores"]
        seat = ["Ash (hidden-until-the-end)", "Basil (the-other-one)"]
        assert winner == ("draw" if final[0] == final[1] else seat[final[1] > final[0]])
        index.shot(artifacts, "index")
        match.assert_clean()
        index.assert_clean()
    finally:
        if seats is not None:
            seats.close()
        match.close()
        index.close()


def test_a_finished_match_steps_with_the_keyboard(
    browser: Browser, served: Served, finished, artifacts
) -> None:
    w = Watched(browser, DESKTOP, served.url)
    try:
        w.page.goto(f"{served.url}/matches/{finished['match_id']}")
        assert visible_hole(w.page) == [1]
        assert "FALLBACK" in w.page.inner_text("#hole-1")
        w.shot(artifacts, "finished-hole-1")
        w.page.keyboard.press("ArrowRight")
        assert visible_hole(w.page) == [2] and w.page.evaluate("location.hash") == "#hole-2"
        w.page.keyboard.press("ArrowRight")
        w.page.keyboard.press("ArrowRight")  # past the last hole: stays there
        assert visible_hole(w.page) == [3]
        w.shot(artifacts, "finished-hole-3")
        w.page.keyboard.press("ArrowLeft")
        assert visible_hole(w.page) == [2]
        w.page.click('#match a.tl[data-hole="1"]')
        assert visible_hole(w.page) == [1]
        w.page.click("#hole-1 .hole-nav a.next")  # the link under a hole, for a phone
        assert visible_hole(w.page) == [2]
        w.assert_clean()
    finally:
        w.close()


def _open_all(page: Page) -> None:
    page.eval_on_selector_all("details", "els => els.forEach(e => e.open = true)")


@pytest.mark.parametrize("viewport", [DESKTOP, PHONE], ids=["desktop", "phone"])
def test_hostile_content_never_runs_and_the_layout_holds(
    browser: Browser, served: Served, finished, artifacts, viewport
) -> None:
    w = Watched(browser, viewport, served.url)
    name = "desktop" if viewport is DESKTOP else "phone"
    try:
        w.page.goto(f"{served.url}/matches/{finished['match_id']}#hole-2")
        _open_all(w.page)
        assert visible_hole(w.page) == [2]
        text = w.page.inner_text("#hole-2")
        assert 'onerror="window.__pwned = 1"' in text  # shown as text, never as markup
        assert w.page.locator("#match img, #match iframe, #match section script").count() == 0
        assert HOSTILE_NAMES[1] in w.page.inner_text(".board")
        w.assert_fits()
        w.shot(artifacts, f"hostile-{name}")
        for _ in range(3):
            w.page.keyboard.press("ArrowRight")
            _open_all(w.page)
            w.assert_fits()
        # the policy header itself: an inline handler slipped into the page is refused
        w.page.evaluate(
            "document.body.insertAdjacentHTML('beforeend', "
            '\'<img src="data:,x" onerror="window.__pwned = 1">\')'
        )
        w.page.wait_for_timeout(200)
        w.assert_clean()
    finally:
        w.close()


def test_an_html_file_opens_from_disk_with_nothing_fetched(
    browser: Browser, finished, tmp_path: Path, artifacts
) -> None:
    out = tmp_path / "saved match.html"
    made = subprocess.run(
        [sys.executable, "-m", "cogolf", "replay", str(finished["path"]), "--html", str(out)],
        capture_output=True, text=True, cwd=ROOT, timeout=60,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    for viewport, name in ((DESKTOP, "html-file"), (PHONE, "html-file-phone")):
        w = Watched(browser, viewport, "file://")
        try:
            w.page.goto(out.as_uri())
            # the inline module ran (its hash is in the policy): holes are stepped
            assert visible_hole(w.page) == [1]
            w.page.keyboard.press("ArrowRight")
            assert visible_hole(w.page) == [2]
            assert "killer test" in w.page.inner_text(".endcard").lower()
            _open_all(w.page)
            w.assert_fits()
            w.shot(artifacts, name)
            w.assert_clean()
        finally:
            w.close()


def test_golf_and_phone_pages(browser: Browser, served: Served, golf, finished, artifacts) -> None:
    w = Watched(browser, PHONE, served.url)
    try:
        w.page.goto(f"{served.url}/matches/{golf['match_id']}")
        assert visible_hole(w.page) == [1]
        hole = w.page.inner_text("#hole-1")
        assert "public 0/3" in hole and "private 0/9 passed" in hole and "bytes" in hole
        # what the golfer was told: the description, the signature and each public test's
        # arguments and expected value, beside what its source returned
        assert "Return the string s with its characters" in hole and "def f(s: str)" in hole
        rows = w.page.locator("#hole-1 table.public tbody tr")
        assert rows.count() == 3
        first = rows.first.inner_text()
        assert '["hello"]' in first and '"olleh"' in first and "not_run" in first
        assert "<b>golfer</b>" in w.page.inner_text(".board")
        w.assert_fits()
        w.shot(artifacts, "golf-phone")
        w.page.goto(f"{served.url}/matches/{finished['match_id']}")
        w.assert_fits()
        w.shot(artifacts, "finished-phone", full=False)
        w.page.goto(f"{served.url}/")
        w.assert_fits()
        w.shot(artifacts, "index-phone")
        w.assert_clean()
    finally:
        w.close()
