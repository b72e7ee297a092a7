"""`cogolf bot` as a real process against a real server."""

from __future__ import annotations

import asyncio
import sys

from cogolf.replay import read_replay
from tests.server.helpers import create, play_well, running_server

POLICIES = "tests/bots/misbehaving.py"


async def bot_process(url: str, policy: str) -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable,
        "-m",
        "cogolf",
        "bot",
        "--url",
        url,
        "--policy",
        policy,
        stdout=asyncio.subprocess.DEVNULL,
        stderr=asyncio.subprocess.DEVNULL,
    )
    return await asyncio.wait_for(proc.wait(), 90)


def submissions(path, slot):
    return [
        e
        for e in read_replay(path).events
        if e.__struct_config__.tag == "submission" and e.slot == slot
    ]


def test_bot_keeps_its_own_deadline_and_substitutes_the_literalist(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(
                server, seed=5, holes=4, hole_deadline_seconds=2.0, retry_deadline_seconds=1.0
            )
            code, _ = await asyncio.gather(
                bot_process(urls[0], f"{POLICIES}:by_hole"), play_well(urls[1])
            )
            return code, tmp_path / "replays" / f"{match_id}.ndjson"

    code, path = asyncio.run(scenario())
    assert code == 0
    subs = submissions(path, 0)
    # Every hole was answered by the bot itself; none needed the server's fallback.
    assert [s.source for s in subs] == ["seat"] * 4
    assert all(s.attempts == 1 for s in subs)
    assert read_replay(path).result.fallbacks == [0, 0]


def test_class_policy_is_instantiated_once_per_match(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=3)
            code, _ = await asyncio.gather(
                bot_process(urls[0], f"{POLICIES}:Counting"), play_well(urls[1])
            )
            return code, tmp_path / "replays" / f"{match_id}.ndjson"

    code, path = asyncio.run(scenario())
    assert code == 0
    assert [s.note for s in submissions(path, 0)] == [
        f"hole number {i} for this instance" for i in (1, 2, 3)
    ]


def test_bad_token_exits_non_zero(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            _, urls = create(server)
            return await bot_process(urls[0] + "x", "literalist")

    assert asyncio.run(scenario()) == 2
