"""Kill the server mid-match with SIGKILL, start it again: the match resumes, nothing is lost."""

from __future__ import annotations

import asyncio
import json
import os
import signal
import socket
import subprocess
import sys
import time

import httpx
import pytest

from cogolf.bots.client import BotRuntime
from cogolf.bots.policy import load_policy
from cogolf.replay import read_replay
from cogolf.sandbox import make_sandbox
from cogolf.verify import verify_replay
from tests.server.helpers import DECK, play_well


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(data, port, *extra) -> subprocess.Popen:
    data.parent.mkdir(parents=True, exist_ok=True)
    argv = [sys.executable, "-m", "cogolf", "serve", "--port", str(port), "--data", str(data)]
    with open(data.parent / "server.log", "a") as log:
        proc = subprocess.Popen(
            [*argv, "--connect-timeout", "20", *extra],
            stdout=subprocess.PIPE,
            stderr=log,
            text=True,
        )
    line = proc.stdout.readline()
    assert "listening on" in line, line
    return proc


def slow_literalist():
    inner = load_policy("literalist")

    def play(observation):
        time.sleep(0.25)
        return inner(observation)

    return play


@pytest.mark.slow
def test_sigkill_mid_match_then_resume(tmp_path):
    port = free_port()
    data = tmp_path / "data"
    server = start_server(data, port)
    base = f"http://127.0.0.1:{port}"
    made = httpx.post(f"{base}/matches", json={"seed": 11, "holes": 6}).json()
    match_id = made["match_id"]
    path = data / "replays" / f"{match_id}.ndjson"

    async def scenario():
        bots = [
            asyncio.create_task(BotRuntime(s["url"], slow_literalist()).run(give_up_after=60))
            for s in made["seats"]
        ]
        async with httpx.AsyncClient(base_url=base) as http:
            give_up = time.monotonic() + 120
            while True:
                status = (await http.get(f"/matches/{match_id}")).json()
                if status["hole"] >= 4:
                    break
                assert status["status"] not in ("finished", "failed"), status
                assert time.monotonic() < give_up, f"the match never reached hole 4: {status}"
                await asyncio.sleep(0.05)
        os.kill(server.pid, signal.SIGKILL)
        server.wait()
        before = [
            line
            for line in path.read_text().splitlines()
            if json.loads(line)["kind"]
            in ("submission", "test_verdict", "par_result", "hole_score")
        ]
        resolved_before = sum(1 for line in before if '"kind":"hole_score"' in line)
        restarted = await asyncio.to_thread(start_server, data, port)
        try:
            codes = await asyncio.wait_for(asyncio.gather(*bots), 120)
        finally:
            restarted.terminate()
            restarted.wait(10)
        return codes, before, resolved_before

    codes, before, resolved_before = asyncio.run(scenario())
    assert codes == [0, 0]
    assert resolved_before >= 3
    replay = read_replay(path)
    assert replay.result is not None and replay.result.reason == "complete"
    assert replay.result.holes_played == 6
    after = [json.dumps(json.loads(x)) for x in path.read_text().splitlines()]
    kept = [json.dumps(json.loads(x)) for x in before]
    # The holes resolved before the kill are kept exactly as they were, never re-scored.
    resolution_kinds = ("submission", "test_verdict", "par_result", "hole_score")
    records = [x for x in after if json.loads(x)["kind"] in resolution_kinds]
    cut = max(i for i, x in enumerate(kept) if '"hole_score"' in x) + 1
    assert records[:cut] == kept[:cut]
    assert replay.result.fallbacks == [0, 0]

    async def verify():
        sandbox = make_sandbox("fork")
        await sandbox.start()
        try:
            return await verify_replay(path, DECK, sandbox)
        finally:
            await sandbox.close()

    assert asyncio.run(verify()) == []
    logs = (tmp_path / "server.log").read_text()
    assert "seat_connected" in logs and "match_id" in logs
    for seat in made["seats"]:
        assert seat["token"] not in logs


def test_single_match_mode_answers_the_original_player_path(tmp_path):
    port = free_port()
    tokens = ["token-zero-123", "token-one-4567"]
    server = start_server(
        tmp_path / "data",
        port,
        "--single",
        "--holes",
        "2",
        "--token",
        tokens[0],
        "--token",
        tokens[1],
    )
    try:
        urls = [f"ws://127.0.0.1:{port}/player?slot={s}&token={tokens[s]}" for s in (0, 1)]

        async def both():
            return await asyncio.gather(play_well(urls[0]), play_well(urls[1]))

        done = asyncio.run(both())
        assert done[0]["result"]["holes_played"] == 2
        assert done[0]["result"]["fallbacks"] == [0, 0]
    finally:
        server.terminate()
        server.wait(10)
