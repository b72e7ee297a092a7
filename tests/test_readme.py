"""The bots shown in the README work, as written, against a real server."""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path

from cogolf.replay import read_replay
from tests.server.helpers import create, running_server

README = (Path(__file__).resolve().parent.parent / "README.md").read_text()
BLOCKS = re.findall(r"```python\n(.*?)```", README, re.S)


async def run_file(*argv: str) -> int:
    proc = await asyncio.create_subprocess_exec(
        sys.executable, *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
    )
    return await asyncio.wait_for(proc.wait(), 120)


def test_readme_bots_play_a_match(tmp_path):
    sdk_bot, raw_bot = (b for b in BLOCKS if "def play" in b or "websockets.connect" in b)
    (tmp_path / "sdk_bot.py").write_text(sdk_bot)
    (tmp_path / "raw_bot.py").write_text(raw_bot)

    async def scenario():
        async with running_server(tmp_path / "data") as server:
            match_id, urls = create(server, holes=2)
            codes = await asyncio.gather(
                run_file(str(tmp_path / "raw_bot.py"), "--url", urls[0]),
                run_file(
                    "-m",
                    "cogolf",
                    "bot",
                    "--url",
                    urls[1],
                    "--policy",
                    f"{tmp_path / 'sdk_bot.py'}:play",
                ),
            )
            return codes, tmp_path / "data" / "replays" / f"{match_id}.ndjson"

    codes, path = asyncio.run(scenario())
    assert codes == [0, 0]
    result = read_replay(path).result
    assert result is not None and result.reason == "complete"
    assert result.fallbacks == [0, 0]  # both bots answered every hole themselves
