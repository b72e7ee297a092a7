"""`cogolf bot --seats-from-stdin`: one real process playing seats of several matches."""

from __future__ import annotations

import asyncio
import sys

from tests.bots.test_bot_process import POLICIES, submissions
from tests.server.helpers import create, play_well, running_server


def test_one_process_plays_many_seats_each_with_a_fresh_policy(tmp_path):
    async def scenario():
        async with running_server(tmp_path) as server:
            first, urls_a = create(server, holes=3)
            second, urls_b = create(server, holes=3)
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "cogolf", "bot", "--seats-from-stdin",
                "--policy", f"{POLICIES}:Counting",
                stdin=asyncio.subprocess.PIPE,
                stdout=asyncio.subprocess.DEVNULL,
                stderr=asyncio.subprocess.DEVNULL,
            )
            assert proc.stdin is not None
            # A line that is no URL and a seat whose token is wrong fail alone.
            lines = [urls_a[0], "not a url", urls_b[0], urls_b[0] + "x", ""]
            proc.stdin.write("\n".join(lines).encode() + b"\n")
            await proc.stdin.drain()
            await asyncio.gather(play_well(urls_a[1]), play_well(urls_b[1]))
            proc.stdin.close()
            code = await asyncio.wait_for(proc.wait(), 90)
            return code, [tmp_path / "replays" / f"{m}.ndjson" for m in (first, second)]

    code, paths = asyncio.run(scenario())
    assert code == 2  # the refused seat's code; every good seat played to the end
    for path in paths:
        subs = submissions(path, 0)
        assert [s.source for s in subs] == ["seat"] * 3
        # A class policy gets an instance per seat, as with a process per match.
        assert [s.note for s in subs] == [f"hole number {i} for this instance" for i in (1, 2, 3)]


def test_a_policy_that_cannot_load_is_refused_before_any_seat(tmp_path):
    async def scenario():
        proc = await asyncio.create_subprocess_exec(
            sys.executable, "-m", "cogolf", "bot", "--seats-from-stdin", "--policy", "nope:x",
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.DEVNULL,
            stderr=asyncio.subprocess.PIPE,
        )
        _, err = await asyncio.wait_for(proc.communicate(b""), 60)
        return proc.returncode, err.decode()

    code, err = asyncio.run(scenario())
    assert code == 2 and "cannot import nope" in err
