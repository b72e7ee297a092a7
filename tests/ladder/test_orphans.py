"""A ladder server that dies for good while it hosts matches: two servers on one real
SQLite file (one a real `cogolf serve` killed with SIGKILL, or an in-process one whose
loop stops), real websocket bots. The live server voids the dead one's matches after
the orphan time and their bots play again; a late result of the dead server counts
nothing; a server back within the orphan time resumes its matches. One case runs on
PostgreSQL, two live servers voiding at once while the dead one writes late."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import sys
import threading
import time
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import sqlalchemy as sa
import websockets
from websockets.exceptions import ConnectionClosed

from cogolf.bots.client import BotRuntime
from cogolf.bots.policy import load_policy
from cogolf.ladder import db
from cogolf.ladder import schema as t
from cogolf.ladder.client import play_ladder
from cogolf.ladder.pages import LadderPages
from cogolf.ladder.service import LadderService, MatchSettings, open_ladder
from cogolf.ladder.store import Outcome, Store
from cogolf.server.run import RunningServer
from tests.ladder.test_attacks import auth
from tests.ladder.test_real_ladder import cli
from tests.server.helpers import running_server
from tests.serving import ROOT

FAST = MatchSettings(holes=1, hole_deadline=3.0, retry_deadline=1.0)
ORPHAN = 5.0  # the live server's orphan time: past a killed `cogolf serve`'s beats (2 s)


class HeldBot:
    """A ladder bot that keeps the seats it is handed and takes them only when told
    (`play`), so the match stays under way as long as a test needs."""

    def __init__(self, key: str) -> None:
        self.key = key
        self.seats: dict[str, str] = {}

    async def join(self, url: str) -> None:
        """One ladder connection, until the server closes it or dies."""
        with contextlib.suppress(ConnectionClosed, OSError):
            async with websockets.connect(url, additional_headers=auth(self.key)) as ws:
                await ws.send(json.dumps({"type": "ready", "concurrent": 1}))
                async for frame in ws:
                    msg = json.loads(frame)
                    if msg["type"] == "seat":
                        self.seats[msg["match_id"]] = msg["url"]

    async def play(self, match_id: str) -> int:
        return await BotRuntime(self.seats[match_id], load_policy("literalist")).run()


async def until(check: Any, timeout: float, what: str) -> Any:
    end = time.monotonic() + timeout
    while True:
        got = await asyncio.to_thread(check)
        if got:
            return got
        assert time.monotonic() < end, f"timed out waiting for {what}"
        await asyncio.sleep(0.1)


def match_rows(store: Store) -> dict[str, Any]:
    with store.reading() as c:
        return {r.id: r for r in c.execute(sa.select(t.matches)).all()}


def counts(store: Store) -> tuple[int, int]:
    """The results counted and the ratings rows written."""
    with store.reading() as c:
        ratings = c.execute(sa.select(sa.func.count()).select_from(t.ratings)).scalar_one()
    return store.seq(), int(ratings)


def one_in_play(store: Store, bots: list[HeldBot]) -> Any:
    """The match both bots hold a seat of, once it is playing."""
    held = set(bots[0].seats) & set(bots[1].seats)
    rows = match_rows(store)
    return next((rows[m] for m in held if rows[m].status == "playing"), None)


def serve_on(data: Path, db_url: str, port: int) -> subprocess.Popen[bytes]:
    argv = [sys.executable, "-m", "cogolf", "serve", "--port", str(port), "--data", str(data),
            "--database", db_url, "--ladder-holes", "1", "--connect-timeout", "60"]  # fmt: skip
    proc = subprocess.Popen(argv, cwd=ROOT, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL)
    assert proc.stdout is not None
    assert b"listening on" in proc.stdout.readline()
    return proc


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


@contextlib.asynccontextmanager
async def live_server(
    tmp: Path, db_url: str, orphan: float = ORPHAN
) -> AsyncIterator[tuple[RunningServer, LadderService]]:
    ladder = open_ladder(tmp, db_url, settings=FAST, pages=LadderPages(), poll=0.1, orphan=orphan)
    try:
        async with running_server(tmp, addons=[ladder], connect_timeout=30.0) as server:
            yield server, ladder
    finally:
        ladder.store.engine.dispose()


def orphaned(row: Any, server: str) -> bool:
    return row.status == "void" and f"its server {server} stopped answering" in (row.reason or "")


async def _killed(tmp: Path) -> None:
    db_url = f"sqlite:///{tmp / 'ladder.sqlite'}"
    store = Store(db.connect(db_url))
    bots = [HeldBot(store.add_bot(n)) for n in ("north", "south")]
    port = free_port()
    dead = serve_on(tmp / "a", db_url, port)
    joined: list[asyncio.Task[None]] = []
    try:
        joined = [asyncio.create_task(b.join(f"ws://127.0.0.1:{port}/ladder")) for b in bots]
        row = await until(lambda: one_in_play(store, bots), 30, "a match in play on the first")
        async with live_server(tmp / "b", db_url) as (server, ladder):
            statuses = await asyncio.to_thread(
                lambda: httpx.get(f"{server.url}/ladder/standings.json", timeout=30).json()
            )
            assert {r["status"] for r in statuses["bots"]} == {"playing"}
            dead.kill()  # SIGKILL: no clean shutdown, its rows stay as they were
            dead.wait()
            with store.reading() as c:
                last_beat = c.execute(
                    sa.select(t.servers.c.seen).where(t.servers.c.name == row.server)
                ).scalar_one()
            await asyncio.gather(*joined)  # the ladder connections died with it
            void = await until(
                lambda: (r := match_rows(store)[row.id]).status != "playing" and r,
                ORPHAN + 15,
                "the dead server's match voided",
            )
            assert orphaned(void, row.server), void
            assert "no heartbeat since 20" in void.reason and "5 s" in void.reason
            assert void.finished_at - last_beat >= ORPHAN  # not before the orphan time
            assert void.score0 is None and void.seq is None and void.token0 is None
            assert counts(store) == (0, 0)
            async with httpx.AsyncClient(base_url=server.url, timeout=30) as http:
                doc = (await http.get("/ladder/standings.json")).json()
                assert {r["name"]: r["status"] for r in doc["bots"]} == {
                    "north": "away",
                    "south": "away",
                }
                page = (await http.get("/ladder/bots/north")).json()
                shown = next(m for m in page["matches"] if m["match_id"] == row.id)
                assert shown["status"] == "void" and shown["reason"] == void.reason
                html = await http.get("/ladder/bots/north", headers={"Accept": "text/html"})
                assert f"void: its server {row.server} stopped answering" in html.text
            printed = await asyncio.to_thread(cli, "ladder", "standings", "--json",
                                              "--database", db_url)  # fmt: skip
            assert printed.returncode == 0, printed.stderr
            assert {r["status"] for r in json.loads(printed.stdout)["bots"]} == {"away"}
            # Pairable again at once: on the live server they play (and it counts).
            players = [
                asyncio.create_task(play_ladder(f"{server.ws_url}/ladder", b.key, "literalist"))
                for b in bots
            ]
            try:

                def played() -> bool:
                    return any(
                        r.status == "finished" and r.server == ladder.server
                        for r in match_rows(store).values()
                    )

                await until(played, 30, "a match of theirs played on the live server")
            finally:
                for p in players:
                    p.cancel()
                await asyncio.gather(*players, return_exceptions=True)
            assert orphaned(match_rows(store)[row.id], row.server)  # and stays void
            seq, ratings = counts(store)
            assert seq >= 1 and ratings == 2 * seq
    finally:
        for task in joined:
            task.cancel()
        if dead.poll() is None:
            dead.kill()
            dead.wait()
        store.engine.dispose()


def test_a_server_killed_mid_match_has_it_voided_by_a_live_one_and_its_bots_play_again(
    tmp_path: Path,
) -> None:
    asyncio.run(_killed(tmp_path))


async def _late(tmp: Path) -> None:
    db_url = f"sqlite:///{tmp / 'ladder.sqlite'}"
    store = Store(db.connect(db_url))
    bots = [HeldBot(store.add_bot(n)) for n in ("east", "west")]
    joined: list[asyncio.Task[None]] = []
    try:
        async with live_server(tmp / "a", db_url) as (zombie, late):
            joined = [asyncio.create_task(b.join(f"{zombie.ws_url}/ladder")) for b in bots]
            row = await until(lambda: one_in_play(store, bots), 30, "a match in play")
            # Its loop stops (no heartbeat, no claims), its matches play on: a server cut
            # off from the ladder, or hung, taken for gone, whose match ends later.
            assert late._task is not None
            late._task.cancel()
            streaks = {b.name: (b.good_streak, b.bad_streak) for b in bots_rows(store)}
            async with live_server(tmp / "b", db_url, orphan=2.5):
                await until(lambda: orphaned(match_rows(store)[row.id], row.server), 20,
                            "the silent server's match voided")  # fmt: skip
                assert row.server == late.server
            # Now the match is played out on the server that was taken for gone.
            assert await asyncio.gather(*(b.play(row.id) for b in bots)) == [0, 0]
            hosted = zombie.registry.get(row.id)
            assert hosted is not None and hosted.status == "finished"
            assert getattr(hosted, "result", None) is not None  # a result, played out
            await until(lambda: row.id not in late._watching, 10, "its result written or refused")
        after = match_rows(store)[row.id]
        assert orphaned(after, row.server) and after.score0 is None and after.seq is None
        assert counts(store) == (0, 0)  # nothing counted, no rating moved
        assert {b.name: (b.good_streak, b.bad_streak) for b in bots_rows(store)} == streaks
        again = Outcome((3, 1), (0, 0), 1, "complete", (False, False))
        assert store.record(row.id, row.server, again) is False  # refused whenever it comes
        assert counts(store) == (0, 0)
    finally:
        for task in joined:
            task.cancel()
        await asyncio.gather(*joined, return_exceptions=True)
        store.engine.dispose()


def bots_rows(store: Store) -> list[Any]:
    with store.reading() as c:
        return list(c.execute(sa.select(t.bots)).all())


def test_the_late_result_of_a_server_taken_for_gone_is_refused_and_counts_nothing(
    tmp_path: Path,
) -> None:
    asyncio.run(_late(tmp_path))


async def _restarted(tmp: Path) -> None:
    db_url = f"sqlite:///{tmp / 'ladder.sqlite'}"
    store = Store(db.connect(db_url))
    bots = [HeldBot(store.add_bot(n)) for n in ("up", "down")]
    port = free_port()
    proc = serve_on(tmp / "a", db_url, port)
    joined: list[asyncio.Task[None]] = []
    try:
        joined = [asyncio.create_task(b.join(f"ws://127.0.0.1:{port}/ladder")) for b in bots]
        row = await until(lambda: one_in_play(store, bots), 30, "a match in play")
        async with live_server(tmp / "b", db_url, orphan=12.0):
            proc.kill()
            proc.wait()
            killed = time.monotonic()
            await asyncio.sleep(3.0)  # down for a while, the live server sweeping meanwhile
            proc = await asyncio.to_thread(serve_on, tmp / "a", db_url, port)
            assert time.monotonic() - killed < 12.0
            assert match_rows(store)[row.id].status == "playing"
            # The seats the bots were given before the kill are the resumed match's.
            assert await asyncio.gather(*(b.play(row.id) for b in bots)) == [0, 0]

            def written() -> Any:
                r = match_rows(store)[row.id]
                return r.status not in ("assigned", "playing") and r

            done = await until(written, 20, "the resumed match's result")
            assert done.status == "finished" and done.server == row.server, done
            assert done.seq == 1 and counts(store) == (1, 2)
    finally:
        for task in joined:
            task.cancel()
        await asyncio.gather(*joined, return_exceptions=True)
        if proc.poll() is None:
            proc.terminate()
            proc.wait(10)
        store.engine.dispose()


def test_a_server_restarted_within_the_orphan_time_resumes_its_match(tmp_path: Path) -> None:
    asyncio.run(_restarted(tmp_path))


def test_two_live_servers_void_a_dead_ones_matches_once_and_its_late_results_are_refused(
    postgres_url: str,
) -> None:
    """On PostgreSQL, where the row locks are real: the dead server's matches, two live
    servers sweeping at once, and the dead server writing its results meanwhile."""
    stores = [Store(db.connect(db.database_url(postgres_url, Path("unused")))) for _ in range(3)]
    dead, one, two = stores
    try:
        for k in range(8):
            dead.join(dead.authenticate(dead.add_bot(f"bot{k}")), "gone", 1)
        dead.heartbeat("gone", "http://gone", [])
        claimed = dead.claim("gone", "http://gone", most=4)
        assert len(claimed) == 4
        for m in claimed:
            dead.playing(m.match_id, "gone")
        one.heartbeat("one", "http://one", [])
        two.heartbeat("two", "http://two", [])
        time.sleep(0.3)
        assert one.void_orphans("one", 60.0) == []  # not silent long enough yet
        voided: dict[str, list[str]] = {}
        recorded: list[str] = []
        start = threading.Barrier(3)

        def sweep(store: Store, name: str) -> None:
            start.wait()
            voided[name] = store.void_orphans(name, 0.2)

        def late() -> None:
            start.wait()
            for m in claimed:
                if dead.record(m.match_id, "gone", Outcome((2, 1), (0, 0), 1, "complete",
                                                           (False, False))):  # fmt: skip
                    recorded.append(m.match_id)

        threads = [threading.Thread(target=sweep, args=(one, "one")),
                   threading.Thread(target=sweep, args=(two, "two")),
                   threading.Thread(target=late)]  # fmt: skip
        for th in threads:
            th.start()
        for th in threads:
            th.join(60)
        # Each match decided once: voided by one live server, or written by its own.
        assert not set(voided["one"]) & set(voided["two"])
        gone = set(voided["one"]) | set(voided["two"])
        assert not gone & set(recorded)
        assert gone | set(recorded) == {m.match_id for m in claimed}
        rows = match_rows(one)
        for m in claimed:
            r = rows[m.match_id]
            assert (r.status == "void") == (m.match_id in gone), r
            if r.status == "void":
                assert orphaned(r, "gone") and r.seq is None
        assert counts(one) == (len(recorded), 2 * len(recorded))
        for m in claimed:  # and later results are refused
            assert not dead.record(m.match_id, "gone", Outcome((0, 1), (0, 0), 1, "complete",
                                                               (False, False)))  # fmt: skip
        assert counts(one) == (len(recorded), 2 * len(recorded))
        with one.reading() as c:
            assert c.execute(sa.select(t.presence)).all() == []  # its bots are not there
    finally:
        for s in stores:
            s.engine.dispose()
