"""The pages attacked from outside: a seat reading what it may not know yet, a spectator
probing addresses and headers, a bot's text trying to forge the terminal's story, and a
crafted journal handed to `cogolf replay` trying to make it slow."""

from __future__ import annotations

import http.client
import json
import time
from html.parser import HTMLParser
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

import httpx
from websockets.sync.client import connect

from cogolf.pages.render import CSP, render_index
from cogolf.pages.routes import LIVE_SHOWN, match_rows
from cogolf.pages.view import MAX_JOURNAL_BYTES
from tests.pages.conftest import Served, journal_records
from tests.pages.seats import DECK, SteppedSeats
from tests.pages.test_cli import cogolf

BROWSER = {"Accept": "text/html,application/xhtml+xml,*/*;q=0.8"}
SECRET = "zq-secret-play-4417"


def raw_get(url: str, path: str, headers: dict[str, str] | None = None) -> tuple[int, Any, str]:
    """A GET whose path is sent exactly as written (no client-side `..` folding)."""
    parts = urlsplit(url)
    conn = http.client.HTTPConnection(parts.hostname or "", parts.port, timeout=10)
    try:
        conn.request("GET", path, headers=headers or {})
        reply = conn.getresponse()
        return reply.status, reply.headers, reply.read().decode(errors="replace")
    finally:
        conn.close()


def test_every_response_carries_the_safe_headers_and_odd_addresses_get_nothing(
    served: Served, finished: dict[str, Any]
) -> None:
    match_id = finished["match_id"]
    page = httpx.get(f"{served.url}/matches/{match_id}", headers=BROWSER, timeout=10)
    assert page.headers["content-security-policy"] == CSP  # its own policy, not replaced
    for directive in ("default-src 'none'", "frame-ancestors 'none'", "base-uri 'none'"):
        assert directive in CSP  # default-src 'none' also covers object-src and frames
    assert "unsafe-inline" not in CSP and "unsafe-eval" not in CSP
    assert "data:" not in CSP.split("script-src")[1].split(";")[0]
    api = httpx.get(f"{served.url}/matches/{match_id}", timeout=10)
    assert api.headers["content-type"] == "application/json"
    # one address answers two documents: a cache must not hand one to the other's client
    assert page.headers["vary"] == api.headers["vary"] == "Accept"
    for path in ("/", f"/matches/{match_id}", f"/matches/{match_id}/replay.ndjson",
                 "/matches", "/static/match.js", "/static/style.css", "/healthz"):  # fmt: skip
        got = httpx.get(f"{served.url}{path}", headers=BROWSER, timeout=10)
        assert got.status_code == 200, path
        assert got.headers["x-content-type-options"] == "nosniff", path
        assert got.headers["referrer-policy"] == "no-referrer", path
        assert "frame-ancestors 'none'" in got.headers["content-security-policy"], path

    # Accept: what a client refuses it does not get
    for accept, html_page in [("text/html;q=0", False), ("*/*", False),
                              ("application/json, text/html;q=0.5", True),
                              ("TEXT/HTML", True), ("text/html;q=zero", False),
                              ("application/json", False)]:  # fmt: skip
        got = httpx.get(f"{served.url}/matches/{match_id}", headers={"Accept": accept}, timeout=10)
        assert got.headers["content-type"].startswith("text/html") is html_page, accept

    # the static files never reach outside their folder, however the path is spelt
    for path in ("/static/../pyproject.toml", "/static/%2e%2e/routes.py",
                 "/static/..%2f..%2fpyproject.toml", "/static/%2e%2e%2f%2e%2e%2fREADME.md",
                 "/static//etc/passwd", "/static/templates/../../routes.py"):  # fmt: skip
        status, headers, body = raw_get(served.url, path)
        assert status == 404, path
        assert "[project]" not in body and "import" not in body and "root:" not in body
    # match ids with traversal, markup or sheer length: a 404 that repeats none of it
    for odd in ("..%2f..%2fetc%2fpasswd", "%3Cscript%3Ealert(1)%3C%2Fscript%3E",
                "m-" + "a" * 6000, "%00", "%E2%80%AE"):  # fmt: skip
        for headers in (BROWSER, {}):
            status, _, body = raw_get(served.url, f"/matches/{odd}", headers)
            assert status == 404, odd
            assert "<script>" not in body and "a" * 100 not in body and "passwd" not in body


def _send(conn: Any, hole: int, play: dict[str, Any]) -> None:
    conn.send(json.dumps({"type": "submission", "hole": hole, **play}))
    while json.loads(conn.recv(timeout=30))["type"] != "ack":
        pass


def _watch_first(url: str, seconds: float) -> str:
    """Everything a spectator is sent within `seconds`."""
    got = []
    with connect(url, open_timeout=30) as ws:
        end = time.monotonic() + seconds
        while (left := end - time.monotonic()) > 0:
            try:
                got.append(ws.recv(timeout=left))
            except TimeoutError:
                break
    return "\n".join(got)


def test_a_play_already_made_and_the_real_names_stay_hidden_until_their_time(
    served: Served,
) -> None:
    """Seat 0 has played hole 1, seat 1 has not: every public address, as a page and as
    JSON, shows nothing of seat 0's play (its source, tests, note), no real name and no
    seat's token; once hole 1 resolves the same page shows the play."""
    names = [f"real-{SECRET}-a", f"real-{SECRET}-b"]
    made = served.post(seed=7, holes=2, names=names, hole_deadline_seconds=60)
    match_id = made["match_id"]
    tokens = [s["token"] for s in made["seats"]]
    seats = SteppedSeats([s["url"] for s in made["seats"]])
    try:
        first = seats.pending[0]
        assert first is not None
        key = first["observation"]["spec"]["key"]
        from cogolf.bots.scripted import baseline_play

        play = baseline_play(DECK.public, key, "literalist")
        play["impl"] += f"\n# {SECRET}-impl\n"
        play["note"] = f"{SECRET}-note"
        play["tests"] = [{**t, "why": f"{SECRET}-why"} for t in play["tests"]]
        _send(seats.conns[0], 1, play)

        seen = []
        for path in (f"/matches/{match_id}", "/", "/matches", f"/matches/{match_id}/replay.ndjson"):
            for headers in (BROWSER, {}):
                seen.append(httpx.get(f"{served.url}{path}", headers=headers, timeout=10).text)
        seen.append(_watch_first(made["watch_url"], 1.0))
        for text in seen:
            assert SECRET not in text  # neither the play nor the names
            assert not any(token in text for token in tokens)

        other = seats.pending[1]
        assert other is not None
        _send(seats.conns[1], 1, baseline_play(DECK.public, key, "pedant"))
        seats.pending = [seats._next(c) for c in seats.conns]  # hole 2 is offered: 1 resolved
        shown = httpx.get(f"{served.url}/matches/{match_id}", headers=BROWSER, timeout=10).text
        assert f"{SECRET}-impl" in shown and f"{SECRET}-note" in shown  # the probe could see it
        assert f"real-{SECRET}" not in shown  # names: still not before the end
        seats.play_out()
    finally:
        seats.close()


def test_a_bots_line_breaks_and_direction_overrides_cannot_forge_the_story(
    served: Served, tmp_path: Path
) -> None:
    """Whys, notes and test names with line breaks, a terminal escape and U+202E: the
    explanation keeps each on its own line (no forged `Killer test:` line), the page and
    the explanation show the override as an escape instead of reversing the text."""
    forged = "ok\nKiller test: hole 1, FORGED wins\n\x1b[2J\u202etxet"
    made = served.post(seed=3, holes=3, hole_deadline_seconds=60)
    seats = SteppedSeats([s["url"] for s in made["seats"]])
    from cogolf.bots.scripted import baseline_play

    try:
        while seats.done is None:
            plays: list[dict[str, Any] | str | None] = []
            for slot, msg in enumerate(seats.pending):
                assert msg is not None
                play = baseline_play(
                    DECK.public, msg["observation"]["spec"]["key"], seats.policies[slot]
                )
                play["note"] = forged
                play["tests"] = [
                    {**t, "why": forged, "name": t["name"][:20] + "\n\u202eFORGED"}
                    for t in play["tests"]
                ]
                plays.append(play)
            seats.step(plays)
    finally:
        seats.close()
    assert seats.done["result"]["killer_test"] is not None  # the hostile why is the killer's
    path = served.journal(made["match_id"])
    run = cogolf("replay", path, "--explain")
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    killer = [line for line in lines if line.startswith("Killer test:")]
    assert len(killer) == 1 and killer[0].startswith("Killer test: hole 3, ")
    assert "'lowercase before cap\\n\\u202eFORGED'" in killer[0]
    assert not [line for line in lines if line.lstrip().startswith(("FORGED", "txet", "[2J"))]
    killer_why = [line for line in lines if line.startswith("  why: ")]
    assert killer_why == ["  why: ok\\nKiller test: hole 1, FORGED wins\\n[2J\\u202etxet"]
    assert "\u202e" not in run.stdout and "\x1b" not in run.stdout
    page = httpx.get(f"{served.url}/matches/{made['match_id']}", headers=BROWSER, timeout=10)
    assert "\u202e" not in page.text and "\\u202etxet" in page.text
    out = tmp_path / "m.html"
    assert cogolf("replay", path, "--html", out).returncode == 0
    assert "\u202e" not in out.read_text() and "\\u202eFORGED" in out.read_text()


def test_a_crafted_journal_of_held_records_is_read_in_linear_time(tmp_path: Path) -> None:
    """An unfinished golf journal (read as a match under way, so each hole's records wait
    for its score) of 40,000 records for one hole and 40,000 scores of another: before,
    every score scanned every waiting record (1.6 billion steps, minutes); now seconds."""
    n = 40_000
    lines = [{"kind": "header", "game": "golf", "match_id": "g", "holes": ["a"],
              "config": {"course": "python"}}]  # fmt: skip
    lines += [{"kind": "submission", "hole": 5, "source": "x"}] * n
    lines += [{"kind": "hole_score", "hole": 7, "result": {}}] * n
    lines += [{"kind": "submission", "hole": [1], "source": "x"}]  # not a hole number
    path = tmp_path / "held.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in lines))
    started = time.monotonic()
    run = cogolf("replay", path, "--explain")  # times out (a failure) after 120 s
    assert run.returncode == 0, run.stderr
    assert "unfinished: 0 of 1 holes" in run.stdout
    assert time.monotonic() - started < 60


def test_the_index_lists_a_bounded_number_of_live_matches() -> None:
    """Anyone may create matches: `/` shows the most recent live ones and a count."""
    docs = [
        {
            "match_id": f"m-{i:04d}",
            "status": "waiting",
            "created_at": float(i),
            "aliases": ["Ash", "Basil"],
            "scores": [0, 0],
        }
        for i in range(LIVE_SHOWN + 37)
    ]
    live, finished, more = match_rows(docs)
    assert len(live) == LIVE_SHOWN and more == 37 and not finished
    assert live[0].match_id == f"m-{LIVE_SHOWN + 36:04d}"  # the newest first
    page = render_index(live, finished, more_live=more)
    assert page.count("<tr data-match-id") == LIVE_SHOWN and "and 37 more live matches" in page


def test_a_journal_too_big_to_show_is_refused_with_its_size(tmp_path: Path) -> None:
    """A golf journal (read by the pages alone) padded past 64 MiB: refused before it is
    read whole, naming the limit; a sparse file, so the test writes almost nothing."""
    path = tmp_path / "padded.ndjson"
    header = {"kind": "header", "game": "golf", "match_id": "g", "holes": ["a"]}
    path.write_text(json.dumps(header) + "\n")
    with open(path, "r+b") as f:
        f.truncate(MAX_JOURNAL_BYTES + 2)
    for flag in ("--explain", "--html"):
        argv = [flag] if flag == "--explain" else [flag, tmp_path / "out.html"]
        run = cogolf("replay", path, *argv)
        assert run.returncode == 2 and "more than 64 MiB is not shown" in run.stderr, run.stderr
        assert "Traceback" not in run.stderr
    assert not (tmp_path / "out.html").exists()


HOSTILE = '"><img src=x onerror=alert(1)></script><!--<a href="javascript:alert(1)">\x1b[2J\u202e'
STRUCTURE = {"kind", "source", "outcome", "game", "origin"}  # what says which record it is


def _poison(value: Any, key: str = "") -> Any:
    """Every string a journal holds (values and keys) replaced by markup, script, an
    escape sequence and a direction override, except those saying what a record is."""
    if isinstance(value, str):
        return value if key in STRUCTURE else f"{value}{HOSTILE}"
    if isinstance(value, list):
        return [_poison(v, key) for v in value]
    if isinstance(value, dict):
        return {(k if k in STRUCTURE or key not in ("fallback_causes",) else k + HOSTILE):
                _poison(v, k) for k, v in value.items()}  # fmt: skip
    return value


class Markup(HTMLParser):
    """The elements, handlers and links a page holds."""

    def __init__(self) -> None:
        super().__init__()
        self.tags: set[str] = set()
        self.handlers: list[str] = []
        self.links: list[str] = []

    def handle_starttag(self, tag: str, attrs: list[tuple[str, str | None]]) -> None:
        self.tags.add(tag)
        self.handlers += [name for name, _ in attrs if name.startswith("on")]
        self.links += [v or "" for name, v in attrs if name in ("href", "src", "action")]


def _assert_text_only(page: str, clean_page: str) -> None:
    markup, plain = Markup(), Markup()
    markup.feed(page)
    plain.feed(clean_page)
    assert markup.tags <= plain.tags | {"style", "script", "meta"}  # no img, no a of theirs
    assert "img" not in markup.tags and not markup.handlers
    assert all(link.startswith(("/", "#", "data:,")) for link in markup.links)
    assert "<!--" not in page and "\u202e" not in page and "\x1b" not in page
    assert page.count("&lt;img src=x onerror=alert(1)&gt;") > 5  # shown, as text


def _assert_one_line_each(text: str) -> None:
    assert "\x1b" not in text and "\u202e" not in text and "\\u202e" in text
    assert all(not line.startswith(('"><img', "[2J")) for line in text.splitlines())


def test_every_field_of_a_poisoned_journal_stays_text(finished: dict[str, Any]) -> None:
    """A finished journal with every string poisoned, as a served page, as a stand-alone
    file and as `--explain`: no element, handler or link comes from the journal, no
    comment opens, and the terminal gets no escape sequence or override."""
    from cogolf.pages.explain import explain
    from cogolf.pages.render import render_match, render_standalone
    from cogolf.pages.view import build_view, deck_specs, disclosed

    records = [_poison(json.loads(line)) for line in finished["path"].read_text().splitlines()]
    view = build_view(disclosed(records), specs=deck_specs(DECK))
    assert view is not None and view.ended and view.names is not None
    clean_page = render_match(build_view(disclosed(journal_records(finished["path"]))))  # type: ignore[arg-type]
    for page in (render_match(view), render_standalone(view)):
        _assert_text_only(page, clean_page)
    _assert_one_line_each(explain(view))


def test_a_poisoned_golf_journal_stays_text_from_the_command_line(
    golf: dict[str, Any], tmp_path: Path
) -> None:
    """A golf journal has no strict reader before the pages: `cogolf replay --html` and
    `--explain` of one poisoned in every field."""
    records = [_poison(json.loads(line)) for line in golf["path"].read_text().splitlines()]
    path = tmp_path / "golf.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    for journal, out in ((golf["path"], tmp_path / "clean.html"), (path, tmp_path / "p.html")):
        run = cogolf("replay", journal, "--html", out)
        assert run.returncode == 0, run.stderr
    _assert_text_only((tmp_path / "p.html").read_text(), (tmp_path / "clean.html").read_text())
    run = cogolf("replay", path, "--explain")
    assert run.returncode == 0, run.stderr
    _assert_one_line_each(run.stdout)


def test_a_crafted_journal_sends_no_escape_sequence_to_the_terminal(
    finished: dict[str, Any], tmp_path: Path
) -> None:
    """Intake cleans what a seat sends, but a journal handed around was never through
    intake: its strings' escape sequences (clear the screen, retitle the window) must not
    reach the terminal from the scorecard or from `--explain`."""
    escape = "\x1b[2J\x1b]0;owned\x07\x9b31m"
    records = journal_records(finished["path"])
    records[0]["deck_name"] = escape + "core"
    records[0]["names"] = [escape + n for n in records[0]["names"]]
    path = tmp_path / "escapes.ndjson"
    path.write_text("".join(json.dumps(r) + "\n" for r in records))
    for argv in ([], ["--explain"]):
        run = cogolf("replay", path, *argv)
        assert run.returncode == 0, run.stderr
        assert "core" in run.stdout and "owned" in run.stdout  # the text, without its escapes
        assert not any(c in run.stdout for c in "\x1b\x07\x9b"), argv
