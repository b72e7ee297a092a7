"""The ladder on a real PostgreSQL (the session's server, `conftest.py`): two stores
claiming at once as two servers would, and two `cogolf serve` sharing one ladder."""

from __future__ import annotations

import json
import os
import random
import subprocess
import sys
import threading
import time
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa

from cogolf.ladder import db
from cogolf.ladder import schema as t
from cogolf.ladder.store import Outcome, Store
from tests.ladder.mixbot import ORDER
from tests.ladder.test_real_ladder import cli, stop
from tests.serving import ROOT, start_serve


def open_store(url: str) -> Store:
    return Store(db.connect(db.database_url(url, Path("unused"))))


def load(store: Store) -> dict[int, int]:
    """Matches each bot holds now (assigned or playing)."""
    held: dict[int, int] = {}
    with store.reading() as c:
        for a, b in c.execute(
            sa.select(t.matches.c.seat0_id, t.matches.c.seat1_id).where(
                t.matches.c.status.in_(("assigned", "playing"))
            )
        ):
            held[a] = held.get(a, 0) + 1
            held[b] = held.get(b, 0) + 1
    return held


def test_two_servers_claiming_at_once_never_host_a_match_twice_or_overload_a_bot(
    postgres_url: str,
) -> None:
    first, second = open_store(postgres_url), open_store(postgres_url)  # two engines
    try:
        assert db.version(first.engine) == db.head()
        for k, name in enumerate(ORDER):
            bot = first.authenticate(first.add_bot(name))
            first.join(bot, "s1" if k % 2 else "s2", 2)
        target = 30
        claimed: dict[str, list[str]] = {"s1": [], "s2": []}
        problems: list[str] = []

        def serve(store: Store, server: str) -> None:
            rng = random.Random(server)
            while store.seq() < target and not problems:
                store.heartbeat(server, f"http://{server}", [])
                got = store.claim(server, f"http://{server}", most=3)
                over = {b: n for b, n in load(store).items() if n > 2}
                if over:
                    problems.append(f"{server}: bots over their 2 matches: {over}")
                for m in got:
                    claimed[server].append(m.match_id)
                    store.playing(m.match_id, server)
                for m in got:
                    score = rng.randrange(3)
                    store.record(
                        m.match_id,
                        server,
                        Outcome((score, 1), (0, 0), 2, "complete", (False, False)),
                    )

        threads = [
            threading.Thread(target=serve, args=(s, n)) for s, n in ((first, "s1"), (second, "s2"))
        ]
        for th in threads:
            th.start()
        for th in threads:
            th.join(120)
        assert not problems, problems
        assert claimed["s1"] and claimed["s2"], claimed  # both hosted some
        assert not set(claimed["s1"]) & set(claimed["s2"])  # none hosted twice
        with first.reading() as c:
            rows = c.execute(sa.select(t.matches)).all()
            ratings = c.execute(sa.select(sa.func.count()).select_from(t.ratings)).scalar_one()
        counted = sorted(r.seq for r in rows if r.seq is not None)
        assert counted == list(range(1, len(counted) + 1)) and len(counted) >= target
        assert ratings == 2 * len(counted)  # both seats' ratings after every result
        for r in rows:
            if r.status == "finished":
                assert r.id in claimed[r.server]  # written by the server that hosted it
            assert r.status in ("finished", "pending")  # none lost half-way
    finally:
        first.engine.dispose()
        second.engine.dispose()


def hosts(store: Store) -> set[str]:
    with store.reading() as c:
        return set(c.execute(sa.select(t.matches.c.server).distinct()).scalars()) - {None}


def standings(url: str) -> dict[str, Any]:
    doc = httpx.get(f"{url}/ladder/standings.json", timeout=30).json()
    for row in doc["bots"]:
        del row["status"], row["last_seen"]  # who is connected where: each server's own view
    return doc


@pytest.mark.slow
def test_two_cogolf_serve_share_one_ladder_on_postgresql(postgres_url: str, tmp_path: Path) -> None:
    done = subprocess.run(
        [sys.executable, "-m", "cogolf", "ladder", "add", "x", "--database", "mysql://h/db"],
        capture_output=True, text=True, cwd=ROOT, timeout=60, check=False,
    )  # fmt: skip
    assert done.returncode == 2 and "give postgresql://" in done.stderr
    store = open_store(postgres_url)
    keys = {name: store.add_bot(name) for name in ORDER}
    options = ["--database", postgres_url, "--ladder-holes", "1", "--ladder-hole-deadline", "4",
               "--ladder-retry-deadline", "2", "--connect-timeout", "4"]  # fmt: skip
    servers = [start_serve("--data", str(tmp_path / n), *options) for n in ("one", "two")]
    bots = []
    try:
        for k, name in enumerate(ORDER):
            url = servers[k % 2][1]  # half the bots on each server
            env = {**os.environ, "MIX_KEY": keys[name]}
            argv = [sys.executable, "-m", "cogolf", "bot", "--ladder", url, "--key-env", "MIX_KEY",
                    "--policy", f"tests/ladder/mixbot.py:{name}", "--concurrent", "2"]  # fmt: skip
            bots.append(subprocess.Popen(argv, cwd=ROOT, env=env, stdout=subprocess.DEVNULL,
                                         stderr=subprocess.DEVNULL))  # fmt: skip
        end = time.monotonic() + 90
        while store.seq() < 16 or len(hosts(store)) < 2:  # either server may claim a pair
            assert time.monotonic() < end, f"{store.seq()} results, hosts {hosts(store)}"
            time.sleep(0.5)
        stop(bots)  # the matches in flight end by their deadlines, played by fallbacks
        end = time.monotonic() + 30
        while load(store):
            assert time.monotonic() < end, f"matches never ended: {load(store)}"
            time.sleep(0.5)
        hosted = [
            {m["match_id"] for m in httpx.get(f"{url}/matches", timeout=30).json()}
            for _, url in servers
        ]
        assert hosted[0] and hosted[1] and not hosted[0] & hosted[1]
        with store.reading() as c:
            rows = c.execute(sa.select(t.matches)).all()
        for r in rows:
            assert r.status in ("finished", "void", "pending"), r
            if r.status != "pending":
                assert r.id in hosted[0] | hosted[1]
        one, two = (standings(url) for _, url in servers)
        assert one == two and one["results"] == store.seq() >= 16
        printed = cli("ladder", "standings", "--json", "--database", postgres_url)
        assert printed.returncode == 0, printed.stderr
        assert [r["rating"] for r in json.loads(printed.stdout)["bots"]] == [
            r["rating"] for r in one["bots"]
        ]
    finally:
        stop([*bots, *(p for p, _ in servers)])
        store.engine.dispose()
