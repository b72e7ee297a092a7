"""A journal poisoned in every field, opened in a real browser as a saved page: nothing
runs, nothing is fetched, and the layout holds with markup in every name and value."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cogolf.pages.render import render_standalone
from cogolf.pages.view import build_view, deck_specs, disclosed
from tests.pages.seats import DECK
from tests.pages.test_browser import (
    CHROMIUM,
    DESKTOP,
    PHONE,
    Browser,
    Watched,
    _open_all,
    visible_hole,
)
from tests.pages.test_hostile import _poison
from tests.stacks import needs

pytestmark = needs(CHROMIUM.exists(), "Debian's chromium")


def test_a_poisoned_saved_page_runs_nothing_and_fits(
    browser: Browser,
    finished: dict[str, Any],
    tmp_path: Path,
    artifacts: Path,
) -> None:
    records = [_poison(json.loads(line)) for line in finished["path"].read_text().splitlines()]
    view = build_view(disclosed(records), specs=deck_specs(DECK))
    assert view is not None
    out = tmp_path / "poisoned.html"
    out.write_text(render_standalone(view), encoding="utf-8")
    for viewport, name in ((DESKTOP, "poisoned"), (PHONE, "poisoned-phone")):
        w = Watched(browser, viewport, "file://")
        try:
            w.page.goto(out.as_uri())
            assert visible_hole(w.page) == [1]  # the page's own script ran
            _open_all(w.page)
            assert w.page.locator("#match img, #match a[href^=javascript]").count() == 0
            assert "onerror=alert(1)" in w.page.inner_text(".board")
            for _ in range(3):
                w.page.keyboard.press("ArrowRight")
                _open_all(w.page)
                w.assert_fits()
            w.shot(artifacts, name)
            w.assert_clean()
        finally:
            w.close()
