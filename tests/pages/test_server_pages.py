"""The pages of a real `cogolf serve`: HTML for a browser, the JSON API unchanged for
every other client, the policy header, and what a live page may and may not show."""

from __future__ import annotations

import html
import json
import threading
from typing import Any

import httpx
from websockets.sync.client import connect

from cogolf.pages.render import CSP
from cogolf.pages.view import build_view, deck_specs, decode_lines
from tests.pages.conftest import HOSTILE_NAMES, PAYLOAD, Served
from tests.pages.seats import DECK

BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}


def test_the_api_answers_json_and_a_browser_gets_the_page(served: Served, finished) -> None:
    match_id = finished["match_id"]
    api = httpx.get(f"{served.url}/matches/{match_id}", timeout=10)
    assert api.headers["content-type"] == "application/json"
    assert api.json()["status"] == "finished" and api.json()["names"] == HOSTILE_NAMES
    page = httpx.get(f"{served.url}/matches/{match_id}", headers=BROWSER, timeout=10)
    assert page.status_code == 200 and page.headers["content-type"].startswith("text/html")
    assert page.headers["content-security-policy"] == CSP
    assert "script-src 'self'" in CSP and "unsafe-inline" not in CSP
    body = page.text
    # every bot string escaped: the payloads appear only as text
    assert PAYLOAD in body
    assert "<img src=x" not in body and "<svg onload" not in body and "<script>window" not in body
    assert html.escape(HOSTILE_NAMES[1], quote=False) in body
    assert body.count("<script") == 1  # only the page's own module
    assert "FALLBACK" in body and "malformed" in body  # hole 1: seat 0 sent junk
    index = httpx.get(f"{served.url}/", headers=BROWSER, timeout=10)
    assert index.headers["content-security-policy"] == CSP
    assert f'href="/matches/{match_id}"' in index.text
    assert PAYLOAD in index.text and "<img src=x" not in index.text
    assert httpx.get(f"{served.url}/matches", timeout=10).json()  # the list stays JSON
    style = httpx.get(f"{served.url}/static/style.css", timeout=10)
    assert style.status_code == 200 and style.headers["content-type"].startswith("text/css")
    missing = httpx.get(f"{served.url}/matches/m-000000000000", headers=BROWSER, timeout=10)
    assert missing.status_code == 404 and "No such match" in missing.text
    assert httpx.get(f"{served.url}/matches/m-000000000000", timeout=10).json() == {
        "error": "no such match"
    }


def _watch_all(url: str, out: list[dict[str, Any]]) -> None:
    with connect(url, open_timeout=30) as ws:
        while True:
            msg = json.loads(ws.recv(timeout=60))
            out.append(msg)
            if msg["type"] == "done":
                return


def test_a_live_page_hides_what_the_seats_may_not_know_and_the_watch_feed_builds_the_same_view(
    served: Served,
) -> None:
    made = served.post(seed=5, holes=2, names=["secret-name-0", "secret-name-1"])
    match_id = made["match_id"]
    feed: list[dict[str, Any]] = []
    watcher = threading.Thread(target=_watch_all, args=(made["watch_url"], feed))
    watcher.start()
    seats = served.seats(made)
    try:
        seats.step()  # hole 1 resolved, hole 2 open
        live = httpx.get(f"{served.url}/matches/{match_id}", headers=BROWSER, timeout=10).text
        assert 'data-live="1"' in live and "secret-name" not in live
        assert 'class="ambiguity"' not in live  # not before the end
        assert live.count('class="tl resolved') == 1 and 'class="tl open"' in live
        seats.play_out()
    finally:
        seats.close()
    watcher.join(60)
    end = httpx.get(f"{served.url}/matches/{match_id}", headers=BROWSER, timeout=10).text
    assert "secret-name-0" in end and 'class="ambiguity"' in end and 'data-ended="1"' in end

    # The spectators' feed (a snapshot, then events) folds into the same view as the journal.
    assert feed[0]["type"] == "snapshot" and feed[-1]["type"] == "done"
    events = [m["event"] for m in feed if m["type"] == "event"] + [feed[-1]["result"]]
    from_feed = build_view(events, snapshot=feed[0], specs=deck_specs(DECK))
    journal = decode_lines(served.journal(match_id).read_bytes())
    from_file = build_view(journal, specs=deck_specs(DECK))
    assert from_feed is not None and from_file is not None

    def shape(view: Any) -> Any:
        return (
            view.aliases,
            view.names,
            view.endcard,
            [
                (h.number, h.spec, h.score, h.cumulative, h.plays)  # ambiguity: live feed omits it
                for h in view.holes
            ],
        )

    assert shape(from_feed) == shape(from_file)
    assert len(from_file.holes) == 2 and from_file.endcard is not None
