"""A real ladder: `cogolf serve` on SQLite, six bots of known strength joining through
`cogolf bot --ladder`, played until the standings give their order; then what people
see of it: `cogolf ladder standings`, `/ladder`, a bot's page, `cogolf ladder publish`."""

from __future__ import annotations

import json
import os
import re
import socket
import subprocess
import sys
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cogolf.ladder.bench import kendall_tau
from tests.ladder.mixbot import ORDER
from tests.serving import ROOT

SETTLE_SECONDS = 150.0
TAU = 0.85  # at most one pair of neighbours the wrong way round


def cli(*args: str, env: dict[str, str] | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args],
        capture_output=True,
        text=True,
        cwd=ROOT,
        env=env,
        timeout=60,
        check=False,
    )


def add(data: Path, name: str) -> str:
    done = cli("ladder", "add", name, "--data", str(data))
    assert done.returncode == 0, done.stderr
    key = done.stdout.splitlines()[-1]
    assert key.startswith("cgk_")
    return key


def tau_of(doc: dict[str, Any]) -> float:
    rating = {r["name"]: r["rating"] for r in doc["bots"]}
    if any(rating.get(n) is None for n in ORDER):
        return -1.0
    return kendall_tau([rating[n] for n in ORDER], list(range(len(ORDER))))


def stop(procs: list[subprocess.Popen[bytes]]) -> None:
    for p in procs:
        p.terminate()
    for p in procs:
        try:
            p.wait(10)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()


def counted_rows(data: Path) -> tuple[int, list[Any], int]:
    """The results counter, every match, and the ratings rows, read from the file."""
    import sqlalchemy as sa

    from cogolf.ladder import db
    from cogolf.ladder import schema as t

    engine = db.connect(db.database_url(None, data))
    try:
        with db.reading(engine) as c:
            seq = int(c.execute(sa.select(t.state.c.seq)).scalar_one())
            rows = list(c.execute(sa.select(t.matches)).all())
            ratings = int(c.execute(sa.select(sa.func.count()).select_from(t.ratings)).scalar_one())
    finally:
        engine.dispose()
    return seq, rows, ratings


def serve_on(data: Path, port: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "cogolf", "serve", "--port", str(port), "--data", str(data),
            "--ladder-holes", "2", "--ladder-hole-deadline", "5", "--ladder-retry-deadline", "2",
            "--connect-timeout", "5"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    assert b"listening on" in proc.stdout.readline()
    return proc


@pytest.fixture(scope="module")
def ladder(tmp_path_factory: pytest.TempPathFactory) -> Iterator[dict[str, Any]]:
    """Six bots until the order settles; then the server killed (-9) with matches under
    way, restarted on its folder, and played on until those matches are over."""
    data = tmp_path_factory.mktemp("ladder")
    keys = {name: add(data, name) for name in ORDER}
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        port = int(s.getsockname()[1])
    url = f"http://127.0.0.1:{port}"
    server = serve_on(data, port)
    bots = []
    try:
        for name in ORDER:
            env = {**os.environ, "MIX_KEY": keys[name]}
            argv = [sys.executable, "-m", "cogolf", "bot", "--ladder", url, "--key-env", "MIX_KEY",
                    "--policy", f"tests/ladder/mixbot.py:{name}", "--concurrent", "2"]  # fmt: skip
            bots.append(
                subprocess.Popen(
                    argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL
                )
            )
        start = time.monotonic()
        with httpx.Client(base_url=url, timeout=30) as http:
            while True:
                doc = http.get("/ladder/standings.json").json()
                if tau_of(doc) >= TAU or time.monotonic() - start > SETTLE_SECONDS:
                    break
                time.sleep(1.0)
        seconds = time.monotonic() - start
        end = time.monotonic() + 30
        while not any(r.status == "playing" for r in counted_rows(data)[1]):
            assert time.monotonic() < end, "no match under way to cut"
            time.sleep(0.1)
        server.kill()
        server.wait()
        killed = counted_rows(data)
        cut = {r.id for r in killed[1] if r.status == "playing"}
        server = serve_on(data, port)  # the bots reconnect by themselves
        end = time.monotonic() + 60
        while True:
            after = counted_rows(data)
            hanging = [
                r.id for r in after[1] if r.id in cut and r.status in ("assigned", "playing")
            ]
            if after[0] >= killed[0] + 2 and not hanging:
                break
            assert time.monotonic() < end, f"{after[0] - killed[0]} results since, {hanging}"
            time.sleep(0.3)
        stop(bots)  # the checks below read a ladder at rest
        yield {"data": data, "url": url, "doc": doc, "seconds": seconds, "killed": killed,
               "cut": cut, "after": counted_rows(data)}  # fmt: skip
    finally:
        stop([*bots, server])


@pytest.mark.slow
def test_six_bots_of_known_strength_settle_in_their_order(ladder: dict[str, Any]) -> None:
    doc = ladder["doc"]
    assert tau_of(doc) >= TAU, (ladder["seconds"], [(r["name"], r["rating"]) for r in doc["bots"]])
    rows = {r["name"]: r for r in doc["bots"]}
    assert sum(r["games"] for r in rows.values()) == 2 * doc["results"]
    for r in rows.values():
        assert r["low"] <= r["rating"] <= r["high"]
        assert r["wins"] + r["draws"] + r["losses"] == r["games"] > 0
    # Every pairing plays both seat orders on one seed, so every bot has its games in pairs
    # (the last pairing may be half played when the order settled).
    assert doc["results"] >= 2 * len(ORDER)


@pytest.mark.slow
def test_the_cli_the_pages_and_the_published_site_show_the_same_ladder(
    ladder: dict[str, Any], tmp_path: Path
) -> None:
    data, url = ladder["data"], ladder["url"]
    done = cli("ladder", "standings", "--json", "--data", str(data))
    assert done.returncode == 0, done.stderr
    printed = json.loads(done.stdout)
    assert {r["name"] for r in printed["bots"]} == set(ORDER)
    assert printed["results"] >= ladder["doc"]["results"]
    table = cli("ladder", "standings", "--data", str(data)).stdout
    assert re.search(rf"^\s*1\s+{printed['bots'][0]['name']}\s", table, re.M), table
    with httpx.Client(base_url=url, timeout=30) as http:
        page = http.get("/ladder", headers={"Accept": "text/html"})
        assert page.status_code == 200 and "text/html" in page.headers["content-type"]
        for name in ORDER:
            assert f'href="/ladder/bots/{name}"' in page.text
        assert "updating live" in page.text and "ladder.js" in page.text
        bot = http.get("/ladder/bots/pedant", headers={"Accept": "text/html"}).text
        assert "<polyline" in bot  # the rating over time
        linked = re.findall(r'href="(http://[^"]+/matches/ladder-\d+-[01])"', bot)
        assert linked, bot
        assert http.get(linked[0]).status_code == 200  # a recent match's own page
        data_doc = http.get("/ladder/bots/pedant").json()
        assert {h["opponent"] for h in data_doc["head_to_head"]} <= set(ORDER) - {"pedant"}
        assert [h["results"] for h in data_doc["history"]] == sorted(
            h["results"] for h in data_doc["history"]
        )
        assert http.get("/ladder/bots/nobody").status_code == 404
    site = tmp_path / "site"
    done = cli("ladder", "publish", "--out", str(site), "--data", str(data))
    assert done.returncode == 0, done.stderr
    index = (site / "index.html").read_text()
    for name in ORDER:
        assert name in index and (site / "bots" / f"{name}.html").is_file()


@pytest.mark.slow
def test_a_ladder_server_killed_mid_match_resumes_and_counts_nothing_twice(
    ladder: dict[str, Any],
) -> None:
    before, rows_before, ratings_before = ladder["killed"]
    assert ratings_before == 2 * before  # a result and its ratings: whole or not at all
    seq, rows, ratings = ladder["after"]
    assert seq >= before + 2
    assert sorted(r.seq for r in rows if r.seq is not None) == list(range(1, seq + 1))
    assert ratings == 2 * seq
    old = {r.id: r for r in rows_before}
    for r in rows:
        if r.id in old and old[r.id].seq is not None:  # what was counted stays as it was
            assert (r.seq, r.score0, r.score1) == (old[r.id].seq, old[r.id].score0,
                                                   old[r.id].score1)  # fmt: skip
        if r.status == "finished":
            assert r.score0 is not None and r.seq is not None and r.token0 is None
    # The matches under way at the kill ended after the restart: resumed from their
    # journals and counted, or voided with the reason.
    ended = [r for r in rows if r.id in ladder["cut"]]
    assert ended and all(r.status == "finished" or r.reason for r in ended)
