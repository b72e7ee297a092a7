"""Live matches against a real uvicorn on loopback, with real websocket clients."""

from __future__ import annotations

import asyncio
import json

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from cogolf.engine import rules
from cogolf.replay import read_replay
from cogolf.sandbox import make_sandbox
from cogolf.verify import verify_replay
from tests.server.helpers import DECK, create, literalist_play, play_well, recv, running_server


def run(coro):
    return asyncio.run(coro)


def fallbacks(path) -> list[tuple[int, int, str | None]]:
    return [
        (e.hole, e.slot, e.fallback_cause)
        for e in read_replay(path).events
        if e.__struct_config__.tag == "submission" and e.source == "fallback"
    ]


def test_full_match_over_http_and_websockets(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            async with httpx.AsyncClient(base_url=server.url) as http:
                assert (await http.get("/healthz")).json() == {"status": "ok"}
                made = (
                    await http.post("/matches", json={"seed": 3, "holes": 3, "names": ["a", "b"]})
                ).json()
                urls = [s["url"] for s in made["seats"]]
                assert made["watch_url"].startswith("ws://")
                done = await asyncio.gather(play_well(urls[0]), play_well(urls[1]))
                assert done[0]["result"]["holes_played"] == 3
                assert done[0]["result"]["reason"] == "complete"
                status = (await http.get(f"/matches/{made['match_id']}")).json()
                assert status["status"] == "finished"
                listing = (await http.get("/matches")).json()
                assert [m["match_id"] for m in listing] == [made["match_id"]]
                replay = await http.get(made["replay_url"].replace(server.url, ""))
                lines = replay.text.splitlines()
                assert json.loads(lines[0])["kind"] == "header"
                assert json.loads(lines[-1])["kind"] == "result"
                assert json.loads(lines[0])["names"] == ["a", "b"]
            path = tmp_path / "replays" / f"{made['match_id']}.ndjson"
            assert await verify_replay(path, DECK, server.registry.sandbox) == []
            assert fallbacks(path) == []

    run(scenario())


def test_welcome_states_every_rule_and_no_secret(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            _, urls = create(server, names=["secret-name-0", "secret-name-1"], seed=123456)
            async with websockets.connect(urls[1]) as ws:
                raw = await ws.recv()
                welcome = json.loads(raw)
                assert welcome["type"] == "welcome"
                assert welcome["protocol"] == "cogame.cogolf.v1"
                assert (welcome["slot"], welcome["alias"], welcome["opponent_alias"]) == (
                    1,
                    "Basil",
                    "Ash",
                )
                r = welcome["rules"]
                assert (
                    r["max_tests"] == rules.MAX_TESTS
                    and r["max_message_bytes"] == rules.MAX_MESSAGE_BYTES
                )
                assert r["par_tests_per_hole"] == 4 and r["cpu_seconds_per_call"] == 1.0
                assert "network" in r["blocked_capabilities"]
                assert "secret-name" not in raw and "123456" not in raw

    run(scenario())


def test_admin_token(tmp_path):
    async def scenario():
        async with (
            running_server(tmp_path, admin_token="s3cret") as server,
            httpx.AsyncClient(base_url=server.url) as http,
        ):
            assert (await http.post("/matches", json={})).status_code == 401
            bad = {"Authorization": "Bearer nope"}
            assert (await http.post("/matches", json={}, headers=bad)).status_code == 401
            good = {"Authorization": "Bearer s3cret"}
            assert (await http.post("/matches", json={"holes": 1}, headers=good)).status_code == 201
            r = await http.post("/matches", json={"holes": 99}, headers=good)
            assert r.status_code == 400 and "holes" in r.json()["error"]
            r = await http.post("/matches", json={"colour": "red"}, headers=good)
            assert r.status_code == 400 and "colour" in r.json()["error"]

    run(scenario())


def test_bad_token_and_duplicate_seat(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            _, urls = create(server)
            with pytest.raises(InvalidStatus) as bad:
                async with websockets.connect(urls[0].replace("token=", "token=x")):
                    pass
            assert bad.value.response.status_code == 403
            with pytest.raises(InvalidStatus) as bad_slot:
                async with websockets.connect(urls[0].replace("slot=0", "slot=2")):
                    pass
            assert bad_slot.value.response.status_code == 403
            async with websockets.connect(urls[0]) as ws:
                await recv(ws, "welcome")
                with pytest.raises(InvalidStatus) as dup:
                    async with websockets.connect(urls[0]):
                        pass
                assert dup.value.response.status_code == 409

    run(scenario())


def test_malformed_then_retry_then_fallback(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=1)
            other = asyncio.create_task(play_well(urls[1]))
            async with websockets.connect(urls[0]) as ws:
                obs = await recv(ws, "observation")
                assert obs["retry"] is False
                await ws.send(json.dumps({"type": "submission", "hole": 1, "impl": 5}))
                err = await recv(ws, "error")
                assert err["cause"] == "malformed" and "$.impl" in err["message"] and err["retry"]
                again = await recv(ws, "observation")
                assert again["retry"] is True and again["observation"] == obs["observation"]
                assert again["deadline_seconds"] == rules.RETRY_DEADLINE_SECONDS
                await ws.send("{not json")
                err = await recv(ws, "error")
                assert err["cause"] == "malformed" and err["retry"] is False
                done = await recv(ws, "done")
                assert done["result"]["fallbacks"] == [1, 0]
                assert done["result"]["fallback_causes"][0] == {"malformed": 1}
            await other
            assert fallbacks(tmp_path / "replays" / f"{match_id}.ndjson") == [(1, 0, "malformed")]

    run(scenario())


def test_oversize_frame_closes_1009_and_counts(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=1)
            other = asyncio.create_task(play_well(urls[1]))
            big = json.dumps({"type": "submission", "hole": 1, "impl": "x", "note": "y" * 20000})
            async with websockets.connect(urls[0]) as ws:
                await recv(ws, "observation")
                await ws.send(big)
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await recv(ws)
                assert closed.value.rcvd.code == 1009
            async with websockets.connect(urls[0]) as ws:
                welcome = await recv(ws)
                assert welcome["type"] == "welcome" and welcome["resumed"]
                obs = await recv(ws, "observation")
                assert obs["retry"] is True
                await ws.send(big)
                with pytest.raises(websockets.ConnectionClosed):
                    await recv(ws)
            await other
            assert fallbacks(tmp_path / "replays" / f"{match_id}.ndjson") == [(1, 0, "oversize")]

    run(scenario())


def test_wrong_hole_is_counted_then_timeout_fallback(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(
                server, holes=1, hole_deadline_seconds=0.6, retry_deadline_seconds=0.4
            )
            other = asyncio.create_task(play_well(urls[1]))
            async with websockets.connect(urls[0]) as ws:
                obs = await recv(ws, "observation")
                await ws.send(literalist_play(obs["observation"], 5))
                err = await recv(ws, "error")
                assert err["cause"] == "wrong_hole" and not err["retry"]
                retry = await recv(ws, "observation")
                assert retry["retry"] is True
                done = await recv(ws, "done")
                assert done["result"]["fallback_causes"][0] == {"timeout": 1}
            await other
            sub = next(
                e
                for e in read_replay(tmp_path / "replays" / f"{match_id}.ndjson").events
                if e.__struct_config__.tag == "submission" and e.slot == 0
            )
            assert sub.wrong_hole == 1 and sub.source == "fallback"

    run(scenario())


def test_a_bot_that_never_answers_and_one_that_never_connects(tmp_path):
    async def scenario():
        async with running_server(tmp_path, connect_timeout=0.5) as server:
            _match_id, urls = create(
                server, holes=2, hole_deadline_seconds=0.3, retry_deadline_seconds=0.2
            )
            async with websockets.connect(urls[0]) as ws:
                done = await recv(ws, "done")
            res = done["result"]
            assert res["holes_played"] == 2 and res["reason"] == "complete"
            assert res["fallback_causes"] == [{"timeout": 2}, {"disconnected": 2}]

    run(scenario())


def test_reconnect_mid_hole_gets_the_pending_observation(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            _match_id, urls = create(server, holes=2, hole_deadline_seconds=20)
            other = asyncio.create_task(play_well(urls[1]))
            async with websockets.connect(urls[0]) as ws:
                first = await recv(ws, "observation")
            async with websockets.connect(urls[0]) as ws:
                assert (await recv(ws))["type"] == "welcome"
                obs = await recv(ws, "observation")
                assert obs["hole"] == first["hole"] and obs["retry"] is False
                assert obs["deadline_seconds"] < 20
                await ws.send(literalist_play(obs["observation"], obs["hole"]))
                assert (await recv(ws, "ack"))["hole"] == 1
                obs2 = await recv(ws, "observation")
                await ws.send(literalist_play(obs2["observation"], obs2["hole"]))
                done = await recv(ws, "done")
            await other
            assert done["result"]["fallbacks"] == [0, 0]

    run(scenario())


def test_spectator_stream(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=2)
            async with websockets.connect(f"{server.ws_url}/matches/{match_id}/watch") as watch:
                snap = json.loads(await watch.recv())
                assert snap["type"] == "snapshot" and snap["status"] == "waiting"
                players = asyncio.gather(play_well(urls[0]), play_well(urls[1]))
                kinds = []
                while True:
                    msg = json.loads(await asyncio.wait_for(watch.recv(), 20))
                    if msg["type"] == "done":
                        assert msg["result"]["holes_played"] == 2
                        break
                    kinds.append(msg["event"]["kind"])
                await players
            assert kinds[0] == "hole_start" and kinds.count("hole_score") == 2
            # A seat's play is only shown with its hole's resolution, never while it is open.
            first_sub = kinds.index("submission")
            assert kinds[first_sub - 1] == "hole_start"
            assert kinds[-1] == "result" and "episode_end" in kinds

    run(scenario())


def test_verify_detects_a_tampered_replay(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=2)
            await asyncio.gather(play_well(urls[0]), play_well(urls[1]))
            path = tmp_path / "replays" / f"{match_id}.ndjson"
            lines = path.read_text().splitlines()
            i = next(n for n, line in enumerate(lines) if '"kind":"hole_score"' in line)
            doc = json.loads(lines[i])
            doc["score"] = [doc["score"][0] + 1, doc["score"][1] - 1]
            lines[i] = json.dumps(doc)
            bad = tmp_path / "tampered.ndjson"
            bad.write_text("\n".join(lines) + "\n")
            problems = await verify_replay(bad, DECK, server.registry.sandbox)
            assert problems and "hole_score" in problems[0] and ".score[0]" in problems[0]

    run(scenario())


def test_spawn_mode_plays_the_same_match(tmp_path):
    async def scenario(mode, sub):
        async with running_server(tmp_path / sub, sandbox_mode=mode) as server:
            _match_id, urls = create(server, holes=2, match_id="same")
            done = await asyncio.gather(play_well(urls[0]), play_well(urls[1]))
            return done[0]["result"]

    a, b = run(scenario("fork", "f")), run(scenario("spawn", "s"))
    for key in ("scores", "hole_scores", "breaches", "par_fails", "illegal_tests"):
        assert a[key] == b[key]


def test_sandbox_factory_rejects_unknown_modes():
    with pytest.raises(ValueError, match="unknown sandbox mode"):
        make_sandbox("thread")
