"""The night pages over HTTP from a real `cogolf serve`, and `league publish` from the CLI:
what they show, what they refuse (paths, malformed files), and the progress file."""

from __future__ import annotations

import json
import os
import shutil
import tempfile
import urllib.error
import urllib.request
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogolf.pages.nights import NightFolders, list_nights
from cogolf.pages.nights_render import render_night, render_night_list
from cogolf.pages.nights_view import build_night

from .conftest import HOSTILE, Nights, Server, cogolf


def get(url: str) -> tuple[int, dict[str, str], str]:
    try:
        with urllib.request.urlopen(url, timeout=30) as res:
            return res.status, dict(res.headers), res.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, dict(exc.headers), exc.read().decode()


def test_a_real_night_page_shows_standings_and_links_every_match(server: Server, nights: Nights):
    status, headers, body = get(f"{server.url}/nights/real")
    assert status == 200
    csp = headers["content-security-policy"]
    assert "script-src 'self'" in csp and "default-src 'none'" in csp
    for name in ("literalist", "pedant", "parrot"):
        assert f'title="{name}">{name}</td>' in body
    replays = sorted(p.stem for p in (nights.replays / "real").glob("*.ndjson"))
    assert len(replays) == 6
    for mid in replays:
        assert f'href="/nights/real/matches/{mid}"' in body
        page_status, _, page = get(f"{server.url}/nights/real/matches/{mid}")
        assert page_status == 200 and 'class="match cogolf"' in page and "League night real" in page
    assert 'id="h2h"' in body and "95% interval" in body


def test_the_league_runner_leaves_a_finished_progress_file(nights: Nights):
    doc = json.loads((nights.replays / "real" / "progress.json").read_text())
    assert doc["state"] == "finished" and doc["done"] == doc["total"] == 6
    assert {r["name"] for r in doc["leaders"]} == {"literalist", "pedant", "parrot"}
    # what the page shows a spectator while it runs: nothing left in play, no time left
    assert doc["playing"] == [] and doc["eta_seconds"] == 0.0 and doc["elapsed_seconds"] > 0
    # The standings ignore it: recomputing them gives the same bytes.
    again = cogolf("league", "standings", "replays/real/", "--out", "again.json",
                   cwd=nights.root)  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert (nights.root / "again.json").read_bytes() == (
        nights.league / "real" / "standings.json"
    ).read_bytes()


@pytest.mark.parametrize(
    "path",
    [
        "/nights/..",
        "/nights/..%2F..%2Fetc",
        "/nights/%2e%2e",
        "/nights/.hidden",
        "/nights/real%2F..%2Fhostile",
        "/nights/nosuch",
        "/nights/data",
        "/nights/real/matches/..%2F..%2Fleague%2Freal%2Fstandings",
        "/nights/real/matches/night",
        "/nights/real/matches/progress",
        "/nights/real/matches/%2e%2e%2fhostile%2fhostile-m000-001",
    ],
)
def test_names_in_a_url_never_become_paths(server: Server, path: str):
    status, _headers, body = get(server.url + path)
    assert status == 404, body[:200]
    assert "cogolf-standings" not in body and "format" not in body


def test_a_symlinked_night_folder_is_not_a_night(server: Server, nights: Nights, tmp_path: Path):
    outside = tmp_path / "outside"
    shutil.copytree(nights.league / "real", outside)
    link = nights.league / "linked"
    link.symlink_to(outside, target_is_directory=True)
    try:
        assert get(f"{server.url}/nights/linked")[0] == 404
        assert "linked" not in get(f"{server.url}/nights")[2]
    finally:
        link.unlink()


@pytest.mark.parametrize(
    ("content", "problem"),
    [
        (b"{not json", "not JSON"),
        (b"[" * 5000 + b"]" * 5000, "nested deeper"),
        (b'{"format": "other"}', "not a standings document"),
    ],
)
def test_a_broken_standings_file_is_a_listed_problem(
    server: Server, nights: Nights, content: bytes, problem: str
):
    folder = nights.league / "broken"
    folder.mkdir(exist_ok=True)
    (folder / "standings.json").write_bytes(content)
    status, _, body = get(f"{server.url}/nights/broken")
    assert status == 200 and problem in body


def test_wrong_shapes_in_standings_are_survived(server: Server, nights: Nights):
    folder = nights.league / "shapes"
    folder.mkdir(exist_ok=True)
    doc = {
        "format": "cogolf-standings",
        "problems": "x",
        "games": {
            "cogolf": {
                "table": [{"name": "a", "rank": "1", "wins": "many"}, 5, None],
                "ratings": {"entrants": [{"name": "a", "rating": "high", "low": None}]},
                "head_to_head": {"a": [1, 2]},
                "results": [{"match_id": 3}],
                "void": "none",
            },
            "golf": {"courses": ["c"], "per_course": {"c": [{"entrant": 1, "score": "x"}]}},
        },
    }
    (folder / "standings.json").write_text(json.dumps(doc))
    status, _, body = get(f"{server.url}/nights/shapes")
    assert status == 200 and "shapes" in body


def test_progress_says_running_only_while_its_process_lives(server: Server, nights: Nights):
    folder = nights.replays / "live"
    folder.mkdir(exist_ok=True)
    (folder / "night.json").write_text('{"format": "cogolf-night", "name": "live", "entrants": []}')
    progress = {
        "state": "matches",
        "done": 3,
        "total": 12,
        "void": 1,
        "pid": os.getpid(),
        "leaders": [{"name": "<b>lead</b>", "points": 9, "margin": 4}],
    }
    (folder / "progress.json").write_text(json.dumps(progress))
    status, _, body = get(f"{server.url}/nights/live")
    assert status == 200 and 'data-progress="/nights/live/progress.json"' in body
    assert "3 of 12 matches" in body and "&lt;b&gt;lead&lt;/b&gt;" in body
    doc = json.loads(get(f"{server.url}/nights/live/progress.json")[2])
    assert doc["state"] == "matches" and doc["done"] == 3 and doc["leaders"][0]["points"] == 9
    dead = 2**22 + 12345  # above the default pid_max: no such process
    (folder / "progress.json").write_text(json.dumps({**progress, "pid": dead}))
    _, _, body = get(f"{server.url}/nights/live")
    assert "status-stopped" in body and "data-progress" not in body
    assert json.loads(get(f"{server.url}/nights/live/progress.json")[2])["state"] == "stopped"


def test_the_nights_list_for_the_home_page(nights: Nights):
    folders = NightFolders(nights.league, nights.replays)
    rows = {r.name: r for r in list_nights(folders)}
    assert rows["real"].entrants == 3 and rows["real"].status == "finished"
    assert rows["hostile"].entrants == len(HOSTILE)
    html = render_night_list(list(rows.values()), lambda n: f"/nights/{n}", page=False)
    assert html.startswith('<section class="night-list"') and 'href="/nights/real"' in html


def test_publish_writes_a_site_with_every_match(nights: Nights, tmp_path: Path):
    site = tmp_path / "site"
    run = cogolf("league", "publish", str(nights.replays / "real"), "--out", str(site),
                 "--league-dir", str(nights.league), cwd=nights.root)  # fmt: skip
    assert run.returncode == 0, run.stderr
    index = (site / "index.html").read_text()
    pages = sorted((site / "matches").glob("*.html"))
    assert len(pages) == 6
    for p in pages:
        assert f'href="matches/{p.name}"' in index
        assert 'href="../index.html"' in p.read_text()
    assert "<script" not in index and 'http-equiv="Content-Security-Policy"' in index
    assert (site / "static" / "night.css").is_file()
    assert (site / "standings.json").read_bytes() == (
        nights.league / "real" / "standings.json"
    ).read_bytes()
    again = cogolf("league", "publish", str(nights.replays / "real"), "--out", str(site),
                   "--league-dir", str(nights.league), cwd=nights.root)  # fmt: skip
    assert again.returncode == 0, again.stderr
    # From any other folder, without --league-dir: the night knows where its standings are.
    elsewhere = cogolf("league", "publish", str(nights.replays / "real"), "--out",
                       str(tmp_path / "site2"), cwd=tmp_path)  # fmt: skip
    assert elsewhere.returncode == 0, elsewhere.stderr
    assert (tmp_path / "site2" / "standings.json").read_bytes() == (
        nights.league / "real" / "standings.json"
    ).read_bytes()
    pointer = nights.replays / "real" / ".standings"
    saved = pointer.read_bytes()
    try:  # without the night's note, the league/ beside its replays/ is looked in
        pointer.unlink()
        beside = cogolf("league", "publish", str(nights.replays / "real"), "--out",
                        str(tmp_path / "site3"), cwd=tmp_path)  # fmt: skip
        assert beside.returncode == 0, beside.stderr
    finally:
        pointer.write_bytes(saved)


def test_publish_refuses_clearly(nights: Nights, tmp_path: Path):
    busy = tmp_path / "busy"
    busy.mkdir()
    (busy / "mine.txt").write_text("keep")
    run = cogolf("league", "publish", str(nights.replays / "real"), "--out", str(busy),
                 "--league-dir", str(nights.league), cwd=nights.root)  # fmt: skip
    assert run.returncode == 2 and "not empty" in run.stderr and "Traceback" not in run.stderr
    assert sorted(p.name for p in busy.iterdir()) == ["mine.txt"]
    run = cogolf("league", "publish", str(nights.replays / "real"), "--out", str(tmp_path / "s"),
                 "--league-dir", str(tmp_path), cwd=nights.root)  # fmt: skip
    assert run.returncode == 2 and "no standings" in run.stderr
    run = cogolf("league", "publish", str(nights.league / "real"), "--out", str(tmp_path / "s"),
                 "--league-dir", str(nights.league), cwd=nights.root)  # fmt: skip
    assert run.returncode == 2 and "give the night's replay folder" in run.stderr
    run = cogolf("league", "publish", str(tmp_path / "nope"), "--out", str(tmp_path / "s"),
                 cwd=nights.root)  # fmt: skip
    assert run.returncode == 2 and "not a folder" in run.stderr
    assert not (tmp_path / "s").exists()


JSON = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=20),
    lambda inner: st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner,
                                                                max_size=4),
    max_leaves=20,
)  # fmt: skip


def _paths(doc: object, prefix: tuple = ()) -> list[tuple]:
    out = [prefix]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*prefix, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*prefix, i))
    return out


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(data=st.data())
def test_any_edit_of_a_standings_file_renders_a_page(nights: Nights, data: st.DataObject):
    """Replace any part of a real standings document with any JSON value: the page renders."""
    doc = json.loads((nights.league / "hostile" / "standings.json").read_text())
    paths = _paths(doc)[1:]
    for _ in range(data.draw(st.integers(1, 3))):
        path = data.draw(st.sampled_from(paths))
        target = doc
        try:
            for key in path[:-1]:
                target = target[key]
            target[path[-1]] = data.draw(JSON)
        except (KeyError, IndexError, TypeError):
            continue
    root = Path(tempfile.mkdtemp(prefix="cogolf-fuzz-"))
    try:
        (root / "league" / "hostile").mkdir(parents=True)
        (root / "league" / "hostile" / "standings.json").write_text(json.dumps(doc))
        folders = NightFolders(root / "league", nights.replays)
        html = render_night(build_night(folders, "hostile", lambda m: m))
        assert "<h1" in html
    finally:
        shutil.rmtree(root)
