"""The ladder's pages in Chromium against a real `cogolf serve` whose two bots
(`cogolf bot --ladder`) keep playing: `/ladder` redraws itself as results come in,
a bot's page plots its rating, and a hostile owner's text stays text."""

from __future__ import annotations

import os
import re
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.pages.conftest import CHROMIUM, ROOT
from tests.pages.test_browser import DESKTOP, PHONE, Watched
from tests.serving import start_serve
from tests.stacks import needs

pytestmark = needs(CHROMIUM.exists(), "Debian's chromium")

if os.environ.get("CI"):
    from playwright.sync_api import Browser  # CI: missing fails
else:
    Browser = pytest.importorskip("playwright.sync_api").Browser

OWNER = "<img src=x onerror=window.__pwned=1>"


@pytest.fixture(scope="module")
def ladder_url(tmp_path_factory: pytest.TempPathFactory) -> Iterator[str]:
    data = tmp_path_factory.mktemp("ladder-pages")
    keys = {}
    for name in ("lit", "ped"):
        done = subprocess.run(
            [sys.executable, "-m", "cogolf", "ladder", "add", name, "--owner",
             OWNER if name == "ped" else name, "--data", str(data)],
            capture_output=True, text=True, cwd=ROOT, timeout=60, check=True,
        )  # fmt: skip
        keys[name] = done.stdout.splitlines()[-1]
    server, url = start_serve(
        "--data", str(data), "--ladder-holes", "1", "--ladder-hole-deadline", "5"
    )  # fmt: skip
    bots = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cogolf",
                "bot",
                "--ladder",
                url,
                "--key-env",
                "K",
                "--policy",
                policy,
            ],
            cwd=ROOT,
            env={**os.environ, "K": keys[name]},
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
        )
        for name, policy in (("lit", "literalist"), ("ped", "pedant"))
    ]
    try:
        yield url
    finally:
        for p in [*bots, server]:
            p.terminate()
        for p in [*bots, server]:
            p.wait(30)


def counted(text: str) -> int:
    found = re.search(r"(\d+) matches counted", text)
    assert found, text
    return int(found.group(1))


@pytest.mark.slow
def test_the_ladder_table_updates_live_and_a_bots_page_plots_its_rating(
    browser: Browser, ladder_url: str, artifacts: Path
) -> None:
    w = Watched(browser, DESKTOP, ladder_url)
    try:
        page = w.page
        page.goto(f"{ladder_url}/ladder")
        first = counted(page.inner_text("#ladder-table"))
        # No reload: the table is redrawn from the server every 2 s.
        page.wait_for_function(
            f"() => +(/(\\d+) matches counted/.exec("
            f"document.getElementById('ladder-table').innerText) || [0, 0])[1] > {first}",
            timeout=60_000,
        )
        page.wait_for_function(
            "() => document.querySelectorAll('#ladder-table svg.bar rect.ci').length == 2",
            timeout=90_000,
        )  # both rated with an interval bar, once they have 4 matches
        assert page.locator("#ladder-table a.name").all_inner_texts() in (
            ["ped", "lit"],
            ["lit", "ped"],
        )
        w.shot(artifacts, "ladder-table")
        page.click("text=ped")
        page.wait_for_url(re.compile(r".*/ladder/bots/ped$"))
        assert page.locator("svg polyline").count() >= 1  # the rating over time
        assert OWNER in page.inner_text("body")  # shown as text, never run
        w.shot(artifacts, "ladder-bot")
        w.assert_clean()
    finally:
        w.close()
    phone = Watched(browser, PHONE, ladder_url)
    try:
        phone.page.goto(f"{ladder_url}/ladder")
        phone.shot(artifacts, "ladder-table-phone")
        phone.assert_fits()
        phone.page.goto(f"{ladder_url}/ladder/bots/lit")
        phone.shot(artifacts, "ladder-bot-phone")
        phone.assert_fits()
        phone.assert_clean()
    finally:
        phone.close()
