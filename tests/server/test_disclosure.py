"""Hidden information stays hidden until it may be known, through a real server.

A seat (or anyone) that opens its own match's public endpoints mid-match must not
learn the seed, later holes, hidden notes, par cases, real names or an open
hole's submissions; after the end, or with the admin token, everything is there.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from typing import Any

import httpx
import msgspec
import websockets
from hypothesis import given, settings
from hypothesis import strategies as st

from cogolf.bots.scripted import baseline_play
from cogolf.replay import read_replay
from cogolf.server.disclosure import View, served_journal
from cogolf.verify import verify_replay
from tests.server.helpers import DECK, recv, running_server

ADMIN = "adm-token-5e1f"
SEED = 5_123_456_789_012_345  # 16 digits: never part of a timestamp or a score
NAMES = ["Realname-Alpha-7f3", "Realname-Bravo-9c1"]
HOLES = 3


def marked_play(observation: dict[str, Any], hole: int, marker: str) -> str:
    """The literalist's play, with a marker in its impl and its note to find it by."""
    play = baseline_play(DECK.public, observation["spec"]["key"], "literalist")
    play["impl"] += f"\n# {marker}\n"
    play["note"] = marker
    return json.dumps({"type": "submission", "hole": hole, **play})


async def seat(url: str, slot: int, stall_at: int, release: asyncio.Event, reached: asyncio.Event):
    """Plays every hole with a marked play; at hole `stall_at` it signals `reached` once
    the hole is open for it (slot 0: its play acknowledged) and then (slot 1) stalls
    until `release`."""
    async with websockets.connect(url) as ws:
        while True:
            msg = await recv(ws, timeout=120)
            if msg["type"] == "done":
                return msg
            if msg["type"] != "observation":
                continue
            hole = msg["hole"]
            if hole == stall_at and slot == 1:
                reached.set()
                await release.wait()
            await ws.send(marked_play(msg["observation"], hole, f"mark-h{hole}-s{slot}"))
            if hole == stall_at and slot == 0:
                assert (await recv(ws, "ack"))["hole"] == hole
                reached.set()


async def stop_seats(tasks: list[asyncio.Task[Any]], release: asyncio.Event) -> None:
    """Lets a stalled seat go and ends every seat task (a failed check must not leave
    the server waiting on them)."""
    release.set()
    for task in tasks:
        task.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)


def secrets_of(keys: list[str], open_hole: int) -> dict[str, bytes]:
    """Everything that must not be served while the match is live, as it would be written."""
    found = {f"name {n}": n.encode() for n in NAMES}
    found["seed"] = str(SEED).encode()
    for i, key in enumerate(keys, start=1):
        hidden = DECK.hidden[key]
        found[f"hidden note of hole {i}"] = msgspec.json.encode(hidden.ambiguity)[1:-1]
        for j, case in enumerate(hidden.par):
            args = msgspec.json.encode(case.args)
            if len(args) >= 6:  # shorter ones ([0], [[]]) turn up in any test
                found[f"par case {j} of hole {i}"] = args
        if i > open_hole:
            spec = DECK.spec(key)
            found[f"key of later hole {i}"] = msgspec.json.encode(key)
            found[f"title of later hole {i}"] = spec.title.encode()
            found[f"prompt of later hole {i}"] = msgspec.json.encode(spec.prompt)[1:40]
    for slot in (0, 1):
        found[f"seat {slot}'s play for the open hole"] = f"mark-h{open_hole}-s{slot}".encode()
    return found


def leaks(served: bytes, secrets: dict[str, bytes]) -> list[str]:
    return [what for what, text in secrets.items() if text in served]


async def served_by_endpoints(
    server: Any, match_id: str, headers: dict[str, str]
) -> tuple[bytes, dict[str, Any], bytes, dict[str, Any]]:
    """Raw bytes of GET /matches, GET /matches/{id}, replay.ndjson, the watch snapshot."""
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as http:
        listing = await http.get("/matches")
        status = await http.get(f"/matches/{match_id}")
        replay = await http.get(f"/matches/{match_id}/replay.ndjson")
    for r in (listing, status, replay):
        assert r.status_code == 200, r.text
    url = f"{server.ws_url}/matches/{match_id}/watch"
    async with websockets.connect(url, additional_headers=headers) as watch:
        snap_raw = await asyncio.wait_for(watch.recv(), 10)
    raw = listing.content + status.content + replay.content + snap_raw.encode()
    return raw, status.json(), replay.content, json.loads(snap_raw)


def test_mid_match_endpoints_reveal_only_what_both_seats_may_know(tmp_path):
    async def scenario() -> None:
        async with (
            running_server(tmp_path, admin_token=ADMIN) as server,
            contextlib.AsyncExitStack() as cleanup,
        ):
            async with httpx.AsyncClient(base_url=server.url) as http:
                made = (
                    await http.post(
                        "/matches",
                        headers={"Authorization": f"Bearer {ADMIN}"},
                        json={
                            "seed": SEED,
                            "holes": HOLES,
                            "names": NAMES,
                            "hole_deadline_seconds": 90,
                        },
                    )
                ).json()
            match_id = made["match_id"]
            disk = tmp_path / "replays" / f"{match_id}.ndjson"
            keys = DECK.draw(SEED, HOLES)
            # A spectator that watches from before the first hole to the end.
            early = await websockets.connect(f"{server.ws_url}/matches/{match_id}/watch")
            release = asyncio.Event()
            reached = [asyncio.Event(), asyncio.Event()]
            seats = [
                asyncio.create_task(seat(s["url"], s["slot"], 2, release, reached[s["slot"]]))
                for s in made["seats"]
            ]
            cleanup.push_async_callback(stop_seats, seats, release)
            await asyncio.wait_for(asyncio.gather(*(e.wait() for e in reached)), 60)

            # Mid-match: hole 1 resolved, hole 2 open, seat 0 has already played it.
            secrets = secrets_of(keys, open_hole=2)
            for headers in ({}, {"Authorization": "Bearer wrong"}):
                raw, status, replay, snap = await served_by_endpoints(server, match_id, headers)
                assert leaks(raw, secrets) == []
                assert status["status"] == "playing" and status["hole"] == 2
                assert status["aliases"] == ["Ash", "Basil"] and "names" not in status
                hole1 = read_replay(disk).events
                score1 = next(e for e in hole1 if e.__struct_config__.tag == "hole_score")
                assert status["scores"] == score1.cumulative
                records = [json.loads(line) for line in replay.splitlines()]
                kinds = [(r["kind"], r.get("hole")) for r in records]
                assert kinds[0] == ("header", None) and ("hole_score", 1) in kinds
                assert kinds[-1] == ("hole_start", 2)
                header = records[0]
                assert {"seed", "names", "holes", "sandbox"}.isdisjoint(header)
                assert header["aliases"] == ["Ash", "Basil"] and header["config"]["holes"] == 3
                # Hole 1 has resolved: both plays are served, its hidden note is not.
                assert b"mark-h1-s0" in replay and b"mark-h1-s1" in replay
                assert all("ambiguity" not in r for r in records)
                assert snap["type"] == "snapshot" and len(snap["resolved"]) == 1
                assert "names" not in snap and snap["scores"] == score1.cumulative

            # The journal on disk is complete.
            on_disk = disk.read_bytes()
            assert all(n.encode() in on_disk for n in NAMES) and str(SEED).encode() in on_disk
            assert msgspec.json.encode(keys) in on_disk
            assert DECK.hidden[keys[0]].ambiguity.encode() in on_disk

            # The admin sees everything mid-match.
            admin = {"Authorization": f"Bearer {ADMIN}"}
            raw, status, replay, snap = await served_by_endpoints(server, match_id, admin)
            assert replay == disk.read_bytes()
            assert status["names"] == NAMES and snap["names"] == NAMES
            assert str(SEED).encode() in raw and msgspec.json.encode(keys) in raw

            release.set()
            dones = await asyncio.wait_for(asyncio.gather(*seats), 120)
            assert dones[0]["result"]["holes_played"] == HOLES

            # The early spectator: nothing hidden before the end, everything at the end.
            stream: list[bytes] = []
            while True:
                raw_msg = await asyncio.wait_for(early.recv(), 30)
                stream.append(raw_msg.encode())
                if json.loads(raw_msg)["type"] == "done":
                    break
            await early.close()
            messages = [json.loads(x) for x in stream]
            end = next(
                i for i, x in enumerate(messages) if x.get("event", {}).get("kind") == "episode_end"
            )
            before_end = b"".join(stream[:end])
            everything = secrets_of(keys, open_hole=HOLES + 1)  # every hole's plays
            hidden_until_end = {k: v for k, v in everything.items() if not k.startswith("seat ")}
            assert leaks(before_end, hidden_until_end) == []
            events = [x["event"] for x in messages[1:-1]]
            # A hole's plays are served once it resolved: between its start and its score.
            for hole in range(1, HOLES + 1):
                at = [i for i, e in enumerate(events) if e.get("hole") == hole]
                assert events[at[0]]["kind"] == "hole_start"
                assert events[at[-1]]["kind"] == "hole_score"
                assert {e["kind"] for e in events[at[0] + 1 : at[-1]]} >= {"submission"}
            assert messages[-1]["result"]["names"] == NAMES
            assert messages[-1]["result"]["seed"] == SEED

            # After the end everything is there for anyone.
            raw, status, replay, snap = await served_by_endpoints(server, match_id, {})
            assert replay == disk.read_bytes()
            assert status["names"] == NAMES and snap["names"] == NAMES
            for hole in range(1, HOLES + 1):
                assert DECK.hidden[keys[hole - 1]].ambiguity.encode() in replay
            assert str(SEED).encode() in raw and msgspec.json.encode(keys) in raw
            assert await verify_replay(disk, DECK, server.registry.sandbox) == []

    asyncio.run(scenario())


def test_resume_keeps_the_journal_complete_and_the_endpoints_filtered(tmp_path):
    async def scenario() -> None:
        release, reached = asyncio.Event(), [asyncio.Event(), asyncio.Event()]
        async with running_server(tmp_path) as server:
            async with httpx.AsyncClient(base_url=server.url) as http:
                made = (
                    await http.post(
                        "/matches",
                        json={
                            "seed": SEED,
                            "holes": 2,
                            "names": NAMES,
                            "tokens": ["tok-zero-0", "tok-one-11"],
                        },
                    )
                ).json()
            match_id = made["match_id"]
            first = [
                asyncio.create_task(seat(s["url"], s["slot"], 2, release, reached[s["slot"]]))
                for s in made["seats"]
            ]
            try:
                await asyncio.wait_for(asyncio.gather(*(e.wait() for e in reached)), 60)
            finally:
                await stop_seats(first, asyncio.Event())
        disk = tmp_path / "replays" / f"{match_id}.ndjson"
        kept = disk.read_bytes()
        assert all(n.encode() in kept for n in NAMES) and b'"kind":"hole_score"' in kept
        # As if the server died while writing hole 2's resolution: a submission of the
        # open hole and a torn line follow; the restarted server cuts them off on resume.
        sub = next(ln for ln in kept.splitlines() if b'"kind":"submission"' in ln)
        dangling = json.loads(sub) | {"hole": 2, "impl": "mark-h2-s0", "note": ""}
        with disk.open("ab") as f:
            f.write(json.dumps(dangling).encode() + b"\n" + b'{"kind":"submission","hole":2,')

        keys = DECK.draw(SEED, 2)
        async with running_server(tmp_path) as server:
            raw, status, replay, _ = await served_by_endpoints(server, match_id, {})
            assert status["status"] in ("waiting", "playing")
            assert leaks(raw, secrets_of(keys, open_hole=2)) == []
            assert b"mark-h1-s1" in replay and b'"kind":"hole_score"' in replay
            served = [json.loads(line) for line in replay.splitlines()]
            assert [r["kind"] for r in served if r.get("hole") == 2] == ["hole_start"]
            urls = [
                f"{server.ws_url}/matches/{match_id}/player?slot={s}&token={t}"
                for s, t in ((0, "tok-zero-0"), (1, "tok-one-11"))
            ]
            release.set()
            dones = await asyncio.wait_for(
                asyncio.gather(
                    *(seat(u, s, 0, release, asyncio.Event()) for s, u in enumerate(urls))
                ),
                120,
            )
            assert dones[0]["result"]["holes_played"] == 2
            _, status, replay, _ = await served_by_endpoints(server, match_id, {})
            assert replay == disk.read_bytes() and status["names"] == NAMES
            assert await verify_replay(disk, DECK, server.registry.sandbox) == []
        # Hole 1, resolved before the stop, is kept byte for byte.
        hole1_end = kept.index(b"\n", kept.index(b'"kind":"hole_score"')) + 1
        assert disk.read_bytes().startswith(kept[:hole1_end])

    asyncio.run(scenario())


json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=8),
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=6), inner, max_size=3)
    ),
    max_leaves=12,
)
records = st.fixed_dictionaries(
    {"kind": st.sampled_from(["header", "hole_start", "submission", "hole_score", "odd"])},
    optional={"hole": st.integers(1, 3), "impl": json_values, "config": json_values},
)
lines = st.lists(
    records.map(lambda r: json.dumps(r).encode())
    | st.sampled_from([b"", b"[1, 2]", b"7", b'{"kind": "hole_score"', b"\xff"]),
    max_size=12,
)


def _as_object(line: bytes) -> dict | None:
    try:
        value = json.loads(line)
    except ValueError:
        return None
    return value if isinstance(value, dict) else None


@settings(max_examples=200, deadline=None)
@given(lines=lines, torn=st.binary(max_size=8))
def test_any_journal_is_served_live_without_an_open_hole_or_an_unlisted_field(lines, torn):
    data = b"\n".join(lines) + b"\n" + torn.replace(b"\n", b"")
    for game in ("cogolf", "golf"):
        out = served_journal(data, View(game, full=False))
        served = [json.loads(line) for line in out.splitlines()]
        source = [r for r in map(_as_object, lines) if r is not None]
        scored = {r["hole"] for r in source if r["kind"] == "hole_score" and "hole" in r}
        for rec in served:
            assert rec["kind"] in ("header", "hole_start", "submission", "hole_score")
            if rec["kind"] == "submission" and "hole" in rec:
                assert rec["hole"] in scored  # held back until its hole resolved
            assert "impl" not in rec or rec["kind"] == "submission"
