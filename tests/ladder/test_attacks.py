"""Attacks on the ladder through its public interface (`WS /ladder`, `POST /ladder/bots`), on a
real server on loopback with its SQLite database, real websocket clients and real matches."""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator
from pathlib import Path
from typing import Any

import httpx
import pytest
import sqlalchemy as sa
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from cogolf.ladder import schema as t
from cogolf.ladder.client import play_ladder
from cogolf.ladder.service import MAX_FRAMES, LadderService, MatchSettings, open_ladder
from cogolf.ladder.store import MAX_CONCURRENT
from cogolf.server.run import RunningServer
from tests.polling import until
from tests.server.helpers import running_server

ADMIN = "admin-token-123456"
FAST = MatchSettings(holes=1, hole_deadline=0.5, retry_deadline=0.2)


@contextlib.asynccontextmanager
async def ladder_server(
    tmp: Path, settings: MatchSettings = FAST, connect_timeout: float = 1.0
) -> AsyncIterator[tuple[RunningServer, LadderService]]:
    ladder = open_ladder(tmp, None, admin_token=ADMIN, settings=settings, poll=0.1)
    async with running_server(tmp, addons=[ladder], connect_timeout=connect_timeout) as server:
        yield server, ladder
    ladder.store.engine.dispose()


def refused(exc: pytest.ExceptionInfo[InvalidStatus]) -> tuple[int, str]:
    response = exc.value.response
    return response.status_code, json.loads(response.body or b"{}").get("error", "")


def auth(key: str) -> dict[str, str]:
    return {"Authorization": f"Bearer {key}"}


async def rows(ladder: LadderService, table: sa.Table) -> list[Any]:
    def read() -> list[Any]:
        with ladder.store.reading() as c:
            return list(c.execute(sa.select(table)).all())

    return await asyncio.to_thread(read)


def nobody_present(ladder: LadderService) -> Any:
    async def check() -> bool:
        return await rows(ladder, t.presence) == []

    return check


async def _keys(
    tmp_path: Path,
) -> None:
    async with ladder_server(tmp_path) as (server, ladder):
        key = ladder.store.add_bot("alice")
        url = f"{server.ws_url}/ladder"
        with pytest.raises(InvalidStatus) as exc:  # even the right key, in the URL
            await websockets.connect(f"{url}?key={key}")
        status, why = refused(exc)
        assert status == 400 and "never in the URL" in why
        with pytest.raises(InvalidStatus) as exc:
            await websockets.connect(f"{url}?x=1", additional_headers=auth(key))
        assert refused(exc)[0] == 400
        for headers, want in (
            ({}, "Authorization: Bearer KEY"),
            ({"Authorization": f"Basic {key}"}, "Authorization: Bearer KEY"),
            (auth("cgk_" + "B" * 43), "unknown key"),
            (auth(key[:20]), "not a ladder key"),
        ):
            with pytest.raises(InvalidStatus) as exc:
                await websockets.connect(url, additional_headers=headers)
            assert refused(exc) == (401, refused(exc)[1]) and want in refused(exc)[1]
        async with websockets.connect(url, additional_headers=auth(key)) as ws:
            welcome = json.loads(await ws.recv())
            assert welcome == {
                "type": "ladder_welcome",
                "protocol": "cogolf.ladder.v1",
                "bot": "alice",
                "max_concurrent": MAX_CONCURRENT,
            }
            await ws.send(json.dumps({"type": "ready", "concurrent": MAX_CONCURRENT}))
            await until(lambda: bool(ladder.connections), "the bot is connected")
            with pytest.raises(InvalidStatus) as exc:  # the same key twice at once
                await websockets.connect(url, additional_headers=auth(key))
            assert refused(exc)[0] == 409 and "already connected" in refused(exc)[1]
            new = await asyncio.to_thread(ladder.store.rotate, "alice")
        with pytest.raises(InvalidStatus) as exc:  # the old key, after rotation
            await websockets.connect(url, additional_headers=auth(key))
        assert refused(exc) == (401, "this key was revoked (the bot's key was rotated)")
        await asyncio.to_thread(ladder.store.retire, "alice")
        with pytest.raises(InvalidStatus) as exc:
            await websockets.connect(url, additional_headers=auth(new))
        assert refused(exc) == (401, "bot 'alice' is retired")


async def _ready_bounds(tmp_path: Path) -> None:
    async with ladder_server(tmp_path) as (server, ladder):
        ladder.ready_timeout = 0.3
        key = ladder.store.add_bot("bob")
        url = f"{server.ws_url}/ladder"

        async def closed_with(*frames: str) -> tuple[int | None, str]:
            async with websockets.connect(url, additional_headers=auth(key)) as ws:
                await ws.recv()
                for f in frames:
                    with contextlib.suppress(ConnectionClosed):
                        await ws.send(f)
                with contextlib.suppress(ConnectionClosed):
                    while True:
                        await asyncio.wait_for(ws.recv(), 5)
                assert ws.close_code is not None
                return ws.close_code, ws.close_reason or ""

        too_many = json.dumps({"type": "ready", "concurrent": MAX_CONCURRENT + 1})
        assert await closed_with(too_many) == (1008, "concurrent must be 1 to 16")
        assert (await closed_with(json.dumps({"type": "ready", "concurrent": 0})))[0] == 1008
        assert (await closed_with('{"type": "ready", "extra": 1}'))[1].startswith("expected ready")
        assert await closed_with("x" * 5000) == (1009, "a ladder message is at most 4096 bytes")
        assert await closed_with() == (1008, "no 'ready' within 0.3 s")
        ready = json.dumps({"type": "ready", "concurrent": 1})
        longest = ready + " " * (4096 - len(ready))
        assert (await closed_with(longest + " "))[0] == 1009  # the first size refused
        async with websockets.connect(url, additional_headers=auth(key)) as ws:
            await ws.recv()
            await ws.send(longest)  # the last size accepted, then the most frames allowed
            await until(lambda: bool(ladder.connections), "the bot is connected")
            for _ in range(MAX_FRAMES):
                await ws.send("{}")
            await asyncio.sleep(1.0)
            assert ws.close_code is None and ladder.connections
        await until(nobody_present(ladder), "nobody present", 10)
        code, reason = await closed_with(ready, *["{}"] * (MAX_FRAMES + 1))
        assert (code, reason) == (1008, f"more than {MAX_FRAMES} frames")
        await until(nobody_present(ladder), "nobody present", 10)  # every one of them left


async def _registering(tmp_path: Path) -> None:
    async with (
        ladder_server(tmp_path) as (server, ladder),
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        r = await http.post("/ladder/bots", json={"name": "carol"})
        assert r.status_code == 401
        r = await http.post("/ladder/bots", json={"name": "carol"}, headers=auth("nope"))
        assert r.status_code == 401
        admin = {"Authorization": f"Bearer {ADMIN}"}
        r = await http.post("/ladder/bots", json={"name": "carol", "owner": "c"}, headers=admin)
        assert r.status_code == 201 and r.json()["name"] == "carol"
        assert ladder.store.authenticate(r.json()["key"]).name == "carol"
        r = await http.post("/ladder/bots", json={"name": "carol"}, headers=admin)
        assert r.status_code == 409
        r = await http.post("/ladder/bots", content=b'{"name": 1}', headers=admin)
        assert r.status_code == 400 and "Expected `str`" in r.json()["error"]
        r = await http.post("/ladder/bots", json={"name": "x", "key": "k"}, headers=admin)
        assert r.status_code == 400
        r = await http.post("/ladder/bots", content=b" " * 4096, headers=admin)
        assert r.status_code == 400  # the last size read (and found empty)
        r = await http.post("/ladder/bots", content=b" " * 4097, headers=admin)
        assert r.status_code == 413  # the first refused unread
        r = await http.post("/ladder/bots", json={"name": "a b"}, headers=admin)
        assert r.status_code == 400 and "bot name" in r.json()["error"]
    ladder = open_ladder(tmp_path / "other", None)  # a server without an admin token
    async with (
        running_server(tmp_path / "other", addons=[ladder]) as server,
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        r = await http.post("/ladder/bots", json={"name": "dave"})
        assert r.status_code == 403 and "--admin-token" in r.json()["error"]
    ladder.store.engine.dispose()


async def _hoarder(url: str, key: str) -> None:
    """Claims every match it may and never connects to a seat."""
    async with websockets.connect(url, additional_headers=auth(key)) as ws:
        await ws.send(json.dumps({"type": "ready", "concurrent": MAX_CONCURRENT}))
        async for _ in ws:
            pass


def _overlaps(intervals: list[tuple[float, float]]) -> int:
    events = sorted([(s, 1) for s, _ in intervals] + [(e, -1) for _, e in intervals])
    most = now = 0
    for _, d in events:
        now += d
        most = max(most, now)
    return most


async def _hoarding(
    tmp_path: Path,
) -> None:
    async with ladder_server(tmp_path) as (server, ladder):
        url = f"{server.ws_url}/ladder"
        hoard = ladder.store.add_bot("hoarder")
        honest = [ladder.store.add_bot(f"honest{i}") for i in range(2)]
        tasks = [asyncio.create_task(_hoarder(url, hoard))] + [
            asyncio.create_task(play_ladder(url, k, "literalist", concurrent=2)) for k in honest
        ]
        try:

            async def paused() -> bool:
                bots = await rows(ladder, t.bots)
                return any(b.name == "hoarder" and b.paused_at for b in bots)

            await until(paused, "the bot is paused", 60)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        bots = {b.id: b for b in await rows(ladder, t.bots)}
        hoarder = next(b for b in bots.values() if b.name == "hoarder")
        matches = await rows(ladder, t.matches)
        mine = [m for m in matches if hoarder.id in (m.seat0_id, m.seat1_id)]
        assert len([m for m in mine if m.status == "void"]) == 3
        assert all("never connected" in m.reason for m in mine if m.status == "void")
        assert all(m.seq is None for m in mine)  # none of them counts for anyone
        spans = [(m.started_at, m.finished_at or 1e12) for m in mine if m.started_at]
        assert _overlaps(spans) == 1  # it asked for 16 at once and got one at a time
        assert "3 bad matches in a row; the last missed its seat" in hoarder.paused_reason


async def _flood(
    tmp_path: Path,
) -> None:
    async with ladder_server(tmp_path) as (server, ladder):
        url = f"{server.ws_url}/ladder"
        keys = [ladder.store.add_bot(f"flood{i}") for i in range(4)]

        async def churn(key: str) -> None:
            for _ in range(15):
                with contextlib.suppress(InvalidStatus, ConnectionClosed):
                    async with websockets.connect(url, additional_headers=auth(key)) as ws:
                        await ws.recv()
                        await ws.send(json.dumps({"type": "ready", "concurrent": 2}))

        await asyncio.gather(*(churn(k) for k in keys))
        await until(lambda: not ladder.connections, "every bot is gone")
        # (a leave is written after the close)
        await until(nobody_present(ladder), "nobody present", 10)
        async with httpx.AsyncClient(base_url=server.url) as http:
            assert (await http.get("/healthz")).status_code == 200
            assert (await http.get("/ladder")).status_code == 200

        async def settled() -> bool:
            return all(
                m.status in ("pending", "finished", "void") for m in await rows(ladder, t.matches)
            )

        # Matches made for bots that left end by their deadlines.
        await until(settled, "the matches have ended", 30)
        for m in await rows(ladder, t.matches):
            assert m.status != "finished" or m.seq is not None
            assert m.status != "void" or m.reason


async def _flaky_seat(url: str) -> None:
    """Connects, waits for its observation, and leaves: at every hole, until done."""
    while True:
        try:
            async with websockets.connect(url) as ws:
                async for frame in ws:
                    kind = json.loads(frame)["type"]
                    if kind == "observation":
                        break
                    if kind == "done":
                        return
        except InvalidStatus:
            return  # 410: the match is over
        except (OSError, ConnectionClosed):
            pass
        await asyncio.sleep(0.05)


async def _flaky_bot(url: str, key: str) -> None:
    seats: list[asyncio.Task[None]] = []
    async with websockets.connect(url, additional_headers=auth(key)) as ws:
        await ws.send(json.dumps({"type": "ready", "concurrent": 1}))
        async for frame in ws:
            msg = json.loads(frame)
            if msg["type"] == "seat":
                seats.append(asyncio.create_task(_flaky_seat(msg["url"])))


async def _flaky(
    tmp_path: Path,
) -> None:
    settings = MatchSettings(holes=2, hole_deadline=0.6, retry_deadline=0.2)
    async with ladder_server(tmp_path, settings) as (server, ladder):
        url = f"{server.ws_url}/ladder"
        flaky = ladder.store.add_bot("flaky")
        honest = ladder.store.add_bot("steady")
        tasks = [
            asyncio.create_task(_flaky_bot(url, flaky)),
            asyncio.create_task(play_ladder(url, honest, "literalist")),
        ]
        try:

            async def paused() -> bool:
                return any(b.name == "flaky" and b.paused_at for b in await rows(ladder, t.bots))

            await until(paused, "the bot is paused", 90)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        bots = {b.name: b for b in await rows(ladder, t.bots)}
        played = [m for m in await rows(ladder, t.matches) if m.status == "finished"]
        assert len(played) >= 3  # it connected, so its matches count
        for m in played:
            slot = 0 if m.seat0_id == bots["flaky"].id else 1
            assert (m.fallbacks0, m.fallbacks1)[slot] == 2
            # the fallback (the literalist) played its holes against the literalist: a draw
            assert m.score0 == m.score1 and m.reason == "complete"
        assert "the fallback played 2 of 2 holes" in bots["flaky"].paused_reason
        assert "disconnected" in bots["flaky"].paused_reason
        assert bots["steady"].paused_at is None


def test_keys_go_in_the_header_only_and_wrong_reused_or_revoked_keys_are_refused(
    tmp_path: Path,
) -> None:
    asyncio.run(_keys(tmp_path))


def test_ready_is_bounded_in_value_size_time_and_frames(tmp_path: Path) -> None:
    asyncio.run(_ready_bounds(tmp_path))


def test_registering_a_bot_needs_the_admin_token(tmp_path: Path) -> None:
    asyncio.run(_registering(tmp_path))


@pytest.mark.slow
def test_a_bot_that_claims_many_matches_and_plays_none_is_held_to_one_then_paused(
    tmp_path: Path,
) -> None:
    asyncio.run(_hoarding(tmp_path))


def test_a_flood_of_joins_and_leaves_leaves_nobody_present_and_nothing_half_made(
    tmp_path: Path,
) -> None:
    asyncio.run(_flood(tmp_path))


@pytest.mark.slow
def test_a_bot_that_disconnects_at_every_hole_loses_by_fallback_and_is_paused(
    tmp_path: Path,
) -> None:
    asyncio.run(_flaky(tmp_path))


async def _colluders(tmp_path: Path) -> None:
    """Two bots of one author, one throwing its matches to the other, and one honest bot."""
    async with (
        ladder_server(tmp_path) as (server, ladder),
        httpx.AsyncClient(base_url=server.url) as http,
    ):
        admin = {"Authorization": f"Bearer {ADMIN}"}
        keys = {}
        for name, owner in (("mallory1", "mallory"), ("mallory2", "mallory"), ("carol", None)):
            r = await http.post("/ladder/bots", json={"name": name, "owner": owner}, headers=admin)
            assert r.status_code == 201
            keys[name] = r.json()["key"]
        url = f"{server.ws_url}/ladder"
        tasks = [
            asyncio.create_task(play_ladder(url, keys[n], "literalist", concurrent=2))
            for n in ("mallory1", "carol")
        ] + [asyncio.create_task(_flaky_bot(url, keys["mallory2"]))]  # the one who throws
        try:

            async def enough() -> bool:
                done = [m for m in await rows(ladder, t.matches) if m.status == "finished"]
                return len(done) >= 6

            await until(enough, "enough results", 60)
        finally:
            for task in tasks:
                task.cancel()
            await asyncio.gather(*tasks, return_exceptions=True)
        ids = {b.name: b.id for b in await rows(ladder, t.bots)}
        pairs = {frozenset((p.a_id, p.b_id)) for p in await rows(ladder, t.pairings)}
        assert frozenset((ids["mallory1"], ids["mallory2"])) not in pairs  # never met
        assert {frozenset((ids["carol"], ids[m])) for m in ("mallory1", "mallory2")} <= pairs


@pytest.mark.slow
def test_two_bots_of_one_owner_never_meet_so_neither_can_throw_matches_to_the_other(
    tmp_path: Path,
) -> None:
    asyncio.run(_colluders(tmp_path))
