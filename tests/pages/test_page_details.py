"""Small things seen on the pages, in Chromium: no keyboard hint on a phone, equal score
lines both visible, test values that wrap between tokens, styled 404 pages with a way
home."""

from __future__ import annotations

from typing import Any

import httpx
import pytest

from tests.pages.conftest import CHROMIUM, Served
from tests.pages.test_browser import DESKTOP, PHONE, Watched
from tests.stacks import needs

pytestmark = needs(CHROMIUM.exists(), "Debian's chromium")


def test_a_phone_gets_no_keyboard_hint_and_a_desktop_does(
    browser: Any, served: Served, finished: dict[str, Any], artifacts
) -> None:
    url = f"{served.url}/matches/{finished['match_id']}"
    desk = Watched(browser, DESKTOP, served.url)
    phone_context = browser.new_context(viewport=PHONE, has_touch=True, is_mobile=True)
    try:
        desk.page.goto(url)
        assert desk.page.locator(".hint").is_visible()
        phone = phone_context.new_page()
        phone.goto(url)
        assert phone.locator(".hint").count() == 1 and not phone.locator(".hint").is_visible()
        phone.screenshot(path=str(artifacts / "finished-touch-phone.png"), full_page=False)
        # equal running scores: seat 1's line is dashed over seat 0's wider one
        dashes = desk.page.eval_on_selector(
            ".chart .line.s1", "e => getComputedStyle(e).strokeDasharray"
        )
        widths = desk.page.eval_on_selector_all(
            ".chart .line", "es => es.map(e => parseFloat(getComputedStyle(e).strokeWidth))"
        )
        assert dashes not in ("", "none") and widths[0] > widths[1]
        desk.assert_clean()
    finally:
        desk.close()
        phone_context.close()


def test_test_values_wrap_between_tokens(
    browser: Any, served: Served, finished: dict[str, Any]
) -> None:
    w = Watched(browser, PHONE, served.url)
    try:
        w.page.goto(f"{served.url}/matches/{finished['match_id']}#hole-1")
        cells = w.page.eval_on_selector_all(
            "table.shots td[data-label=expected] code", "es => es.map(e => e.innerHTML)"
        )
        lists = [c for c in cells if "," in c or "[" in c]
        assert lists and all("<wbr>" in c for c in lists), cells
        texts = w.page.eval_on_selector_all(
            "table.shots td[data-label=expected] code", "es => es.map(e => e.textContent)"
        )
        assert all("<wbr>" not in t for t in texts)  # a break opportunity, never text
        w.assert_fits()
        w.assert_clean()
    finally:
        w.close()


@pytest.mark.parametrize("path", ["/no/such/page", "/matches/m-nope"])
def test_a_404_is_a_styled_page_with_a_way_home(browser: Any, served: Served, path: str) -> None:
    reply = httpx.get(f"{served.url}{path}", headers={"Accept": "text/html"}, timeout=10)
    assert reply.status_code == 404 and "text/html" in reply.headers["content-type"]
    assert reply.headers["content-security-policy"].startswith("default-src 'none'")
    api = httpx.get(f"{served.url}/no/such/page", timeout=10)
    assert api.status_code == 404 and api.json() == {"error": "not found"}
    w = Watched(browser, PHONE, served.url)
    try:
        w.page.goto(f"{served.url}{path}")
        assert w.page.locator("h1").inner_text() == "Not found"
        w.page.locator('.not-found a[href="/"]').click()
        w.page.wait_for_url(f"{served.url}/")
        assert w.page.locator("#live").count() == 1
        w.assert_clean()
    finally:
        w.close()
