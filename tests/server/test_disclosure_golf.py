"""A hosted golf match, served through a real server: the model name stays hidden until
the end (or the admin asks), and private tests never show more than their name and
whether they passed, however the submission tries to echo them."""

from __future__ import annotations

import asyncio
import json
from typing import Any

import httpx
import websockets

from tests.games.golf.live_helpers import golf_server, recv

ADMIN = "adm-golf-token-77"
MODEL = "Model-Secret-4b2"
# Echoes every input back: what it returns (`got`) is each private test's input.
ECHO = "def f(s):\n    return s  # mark-g1\n"
# (not "racecar": also the palindrome hole's public test, which its hole_start records)
PRIVATE_INPUTS = ["Hello, World!", "abcdefghijklmnopqrstuvwxyz", "12345", "ÅßÇ"]


async def served(server: Any, match_id: str, headers: dict[str, str]) -> tuple[bytes, bytes]:
    """All the bytes of GET /matches, GET /matches/{id}, the watch snapshot and the
    replay; and the replay alone."""
    async with httpx.AsyncClient(base_url=server.url, headers=headers) as http:
        parts = [await http.get(p) for p in ("/matches", f"/matches/{match_id}")]
        replay = await http.get(f"/matches/{match_id}/replay.ndjson")
    assert all(r.status_code == 200 for r in [*parts, replay])
    url = f"{server.ws_url}/matches/{match_id}/watch"
    async with websockets.connect(url, additional_headers=headers) as watch:
        snap = (await asyncio.wait_for(watch.recv(), 10)).encode()
    return b"".join(p.content for p in parts) + snap + replay.content, replay.content


def private_leaks(data: bytes) -> list[str]:
    return [text for text in PRIVATE_INPUTS if text.encode() in data]


def test_golf_private_tests_and_model_name_stay_hidden(tmp_path):
    async def scenario() -> None:
        async with golf_server(tmp_path, admin_token=ADMIN) as server:
            admin = {"Authorization": f"Bearer {ADMIN}"}
            async with httpx.AsyncClient(base_url=server.url, headers=admin) as http:
                made = await http.post(
                    "/matches",
                    json={
                        "game": "golf",
                        "course": "python",
                        "names": [MODEL],
                        "hole_deadline_seconds": 60,
                    },
                )
            assert made.status_code == 201, made.text
            match_id = made.json()["match_id"]
            disk = tmp_path / "replays" / f"{match_id}.ndjson"
            watcher = await websockets.connect(made.json()["watch_url"])
            async with websockets.connect(made.json()["seats"][0]["url"]) as ws:
                first = await recv(ws, "observation")
                assert first["observation"]["task"]["key"] == "reverse-string"
                await ws.send(json.dumps({"type": "submission", "hole": 1, "source": ECHO}))
                second = await recv(ws, "observation")  # hole 1 resolved; hole 2 open
                assert second["hole"] == 2

                raw, replay = await served(server, match_id, {})
                assert MODEL.encode() not in raw and private_leaks(raw) == []
                records = [json.loads(line) for line in replay.splitlines()]
                assert "model" not in records[0]["config"]
                score = next(r for r in records if r["kind"] == "hole_score")
                assert b"mark-g1" in replay  # a resolved hole's source is served
                tests = score["result"]["tests"]
                # private tests are counted, never listed
                assert not [t for t in tests if not t["name"].startswith("public-")]
                assert score["result"]["private_total"] > 0
                public = [t for t in tests if t["name"].startswith("public-")]
                assert any(t["got"] for t in public)  # public tests keep their detail

                raw, replay = await served(server, match_id, admin)
                assert MODEL.encode() in raw and private_leaks(raw) == []

                # Pass every remaining hole to reach the end.
                msg = second
                while msg["type"] != "done":
                    if msg["type"] == "observation":
                        await ws.send(
                            json.dumps({"type": "submission", "hole": msg["hole"], "source": None})
                        )
                    msg = await recv(ws)
            stream = []
            while (item := await recv(watcher))["type"] != "done":
                stream.append(item)
            stream.append(item)
            await watcher.close()
            watched = json.dumps(stream, ensure_ascii=False).encode()
            assert private_leaks(watched) == [] and b"mark-g1" in watched
            assert stream[-1]["result"]["model"] == MODEL
            raw, replay = await served(server, match_id, {})
            assert MODEL.encode() in raw and private_leaks(raw) == []
            assert json.loads(replay.splitlines()[0])["config"]["model"] == MODEL
            assert len(replay.splitlines()) == len(disk.read_bytes().splitlines())

    asyncio.run(scenario())
