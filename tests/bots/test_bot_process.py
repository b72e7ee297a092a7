"""`cogolf bot` as a real process against a real server."""

from __future__ import annotations

import asyncio
import json
import re
import sys
from pathlib import Path

from cogolf.replay import read_replay
from tests.server.helpers import create, play_well, running_server

POLICIES = "tests/bots/misbehaving.py"


async def bot_process(url: str, policy: str, log: Path | None = None) -> int:
    out = open(log, "wb") if log is not None else asyncio.subprocess.DEVNULL  # noqa: SIM115
    try:
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
            stderr=out,
        )
    finally:
        if not isinstance(out, int):
            out.close()
    return await asyncio.wait_for(proc.wait(), 90)


def submissions(path, slot):
    return [
        e
        for e in read_replay(path).events
        if e.__struct_config__.tag == "submission" and e.slot == slot
    ]


def test_bot_keeps_its_own_deadline_and_sends_the_literalist_marked_as_its_fallback(tmp_path):
    """A policy that raises, hangs and returns junk: each hole is the literalist's play,
    sent in time and marked, so the replay records and counts it as the seat's own
    fallback with the cause, and the bot's own log says why at once (the intake's
    path-precise message; the exception with its file and line)."""
    log = tmp_path / "bot.log"

    async def scenario():
        async with running_server(tmp_path) as server:
            match_id, urls = create(
                server, seed=5, holes=4, hole_deadline_seconds=2.0, retry_deadline_seconds=1.0
            )
            code, _ = await asyncio.gather(
                bot_process(urls[0], f"{POLICIES}:by_hole", log), play_well(urls[1])
            )
            return code, tmp_path / "replays" / f"{match_id}.ndjson"

    code, path = asyncio.run(scenario())
    assert code == 0
    subs = submissions(path, 0)
    # In time every hole (no server fallback, no retry), but three were not the policy's.
    assert [s.source for s in subs] == ["seat_fallback"] * 3 + ["seat"]
    assert [s.fallback_cause for s in subs] == [
        "policy_raised", "policy_timeout", "policy_invalid", None
    ]
    assert all(s.attempts == 1 for s in subs)
    raised, slow, junk, _ = (s.fallback_detail for s in subs)
    assert re.fullmatch(r"RuntimeError: policy bug \(at misbehaving\.py:\d+ in by_hole\)", raised)
    assert slow.startswith("the policy did not answer within 1.5 s")
    assert junk == "the policy's play would be refused: Expected `str`, got `int` - at `$.impl`"
    result = read_replay(path).result
    assert result.fallbacks == [3, 0]
    assert result.fallback_causes[0] == {
        "policy_invalid": 1, "policy_raised": 1, "policy_timeout": 1
    }
    said = log.read_text()
    for detail in (raised, junk, "did not answer within 1.5 s"):
        assert json.dumps(detail)[1:-1] in said, said
    assert "would refuse" not in said


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
