"""A ladder server that dies for good while it hosts matches: two servers on one real
SQLite file (one a real `cogolf serve` killed with SIGKILL, or an in-process one whose
loop stops), real websocket bots. The live server voids the dead one's matches after
the orphan time and their bots play again; a late result of the dead server counts
nothing; a server back within the orphan time resumes its matches; `cogolf serve
--ladder-orphan-seconds` sets the orphan time. One case runs on PostgreSQL, two live
servers voiding at once while the dead one writes late."""

from __future__ import annotations

import asyncio
import contextlib
import json
import socket
import subprocess
import threading
import time
from collections.abc import AsyncIterator
from dataclasses import dataclass
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
from tests.serving import start_serve

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


def serve_on(data: Path, db_url: str, port: int, *options: str) -> subprocess.Popen[bytes]:
    """A real `cogolf serve` on a given port (a restarted one comes back on it)."""
    proc, _ = start_serve("--port", str(port), "--data", str(data), "--database", db_url,
                          "--ladder-holes", "1", "--connect-timeout", "60", *options)  # fmt: skip
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


@dataclass
class InPlay:
    """Two held bots playing a match on a real `cogolf serve` (`proc`, on `port`)."""

    store: Store
    db_url: str
    bots: list[HeldBot]
    port: int
    proc: subprocess.Popen[bytes]
    joined: list[asyncio.Task[None]]  # the bots' ladder connections to it
    row: Any  # the match's row once it is playing


@contextlib.asynccontextmanager
async def match_in_play(tmp: Path, names: tuple[str, str]) -> AsyncIterator[InPlay]:
    """A ladder on `tmp/ladder.sqlite`, bots `names` registered and connected to a
    `cogolf serve` on `tmp/a`, until their match is in play there. On the way out the
    bots leave and the server (`proc`, perhaps replaced meanwhile) is stopped."""
    db_url = f"sqlite:///{tmp / 'ladder.sqlite'}"
    store = Store(db.connect(db_url))
    bots = [HeldBot(store.add_bot(n)) for n in names]
    port = free_port()
    at = InPlay(store, db_url, bots, port, serve_on(tmp / "a", db_url, port), [], None)
    try:
        at.joined = [asyncio.create_task(b.join(f"ws://127.0.0.1:{port}/ladder")) for b in bots]
        at.row = await until(lambda: one_in_play(store, bots), 30, "a match in play")
        yield at
    finally:
        for task in at.joined:
            task.cancel()
        await asyncio.gather(*at.joined, return_exceptions=True)
        if at.proc.poll() is None:
            at.proc.terminate()
            at.proc.wait(10)
        store.engine.dispose()


def orphaned(row: Any, server: str) -> bool:
    return row.status == "void" and f"its server {server} stopped answering" in (row.reason or "")


async def _killed(tmp: Path) -> None:
    async with match_in_play(tmp, ("north", "south")) as at:
        store, db_url, bots, dead, row = at.store, at.db_url, at.bots, at.proc, at.row
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
            await asyncio.gather(*at.joined)  # the ladder connections died with it
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
    async with match_in_play(tmp, ("up", "down")) as at:
        store, db_url, bots, row = at.store, at.db_url, at.bots, at.row
        async with live_server(tmp / "b", db_url, orphan=12.0):
            at.proc.kill()
            at.proc.wait()
            killed = time.monotonic()
            await asyncio.sleep(3.0)  # down for a while, the live server sweeping meanwhile
            at.proc = await asyncio.to_thread(serve_on, tmp / "a", db_url, at.port)
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


def test_a_server_restarted_within_the_orphan_time_resumes_its_match(tmp_path: Path) -> None:
    asyncio.run(_restarted(tmp_path))


def silent_server_with_a_match(store: Store, server: str, names: tuple[str, str],
                               silent: float) -> str:  # fmt: skip
    """A match of bots `names` playing on `server`, whose last heartbeat was `silent`
    seconds ago (written straight into its row: no server waits that long here)."""
    for name in names:
        store.join(store.authenticate(store.add_bot(name)), server, 1)
    store.heartbeat(server, f"http://{server}", [])
    (claimed,) = store.claim(server, f"http://{server}", most=1)
    store.playing(claimed.match_id, server)
    with store.engine.begin() as c:
        beat = t.servers.update().where(t.servers.c.name == server)
        c.execute(beat.values(seen=time.time() - silent))
    return claimed.match_id


def test_serve_with_ladder_orphan_seconds_voids_after_that_time_not_the_default(
    tmp_path: Path,
) -> None:
    """`cogolf serve --ladder-orphan-seconds 15`, its shortest: a server silent for 30 s
    (not yet gone for the default 60 s) has its match voided, one silent for 5 s keeps
    its own."""
    db_url = f"sqlite:///{tmp_path / 'ladder.sqlite'}"
    store = Store(db.connect(db_url))
    try:
        gone = silent_server_with_a_match(store, "gone", ("n1", "s1"), 30.0)
        quiet = silent_server_with_a_match(store, "quiet", ("n2", "s2"), 5.0)
        proc = serve_on(tmp_path / "a", db_url, 0, "--ladder-orphan-seconds", "15")
        try:
            void = asyncio.run(until(lambda: (r := match_rows(store)[gone]).status == "void"
                                     and r, 20, "the silent server's match voided"))  # fmt: skip
            assert orphaned(void, "gone"), void
            assert void.reason.endswith("(a server silent for 15 s is gone)"), void.reason
            assert match_rows(store)[quiet].status == "playing"  # 5 s is not gone
        finally:
            proc.terminate()
            proc.wait(10)
    finally:
        store.engine.dispose()


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
