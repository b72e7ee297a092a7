"""One bot process playing many seats: `cogolf bot --seats-from-stdin`.

A league night starts one such process per policy entrant and hands it seat
URLs, one per line on its standard input, as matches are created, so no match
pays a process start for a policy. Every seat is played by its own `BotRuntime`
(the code path of `cogolf bot --url`) over its own connection, with its policy
loaded afresh for the seat: a class gets a new instance and a `file.py` is
executed again, so a policy keeps no state from one match to the next, as when
each match had its own process (a `module:name` function shares its module's
globals across the seats of the process). The process exits once its input is
closed and every seat it holds is done.
"""

from __future__ import annotations

import asyncio
import re
import sys
from pathlib import Path
from urllib.parse import urlsplit

import structlog

from cogolf.bots.client import BotRuntime
from cogolf.bots.policy import PolicyError, load_policy

log = structlog.get_logger("cogolf.bot")


async def _seat(url: str, policy_ref: str, deck_dir: Path | None) -> int:
    try:
        policy = load_policy(policy_ref, deck_dir=deck_dir)
    except PolicyError as exc:
        log.error("policy_failed", error=str(exc))
        return 2
    runtime = BotRuntime(url, policy, deck_dir=deck_dir)
    # One log for many seats: each line names its match.
    match = re.search(r"/matches/([^/]+)/player", urlsplit(url).path)
    runtime.log = runtime.log.bind(match_id=match.group(1) if match else "?")
    return await runtime.run()


async def play_seats(policy_ref: str, deck_dir: Path | None) -> int:
    """Play every seat URL read from stdin until it closes; 0 when every seat ended well."""
    loop = asyncio.get_running_loop()
    reader = asyncio.StreamReader()
    await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader), sys.stdin)
    seats: set[asyncio.Task[int]] = set()
    codes: list[int] = []

    def ended(task: asyncio.Task[int]) -> None:
        seats.discard(task)
        codes.append(1 if task.cancelled() or task.exception() else task.result())

    while line := await reader.readline():
        url = line.decode("utf-8", "replace").strip()
        if not url:
            continue
        task = asyncio.create_task(_seat(url, policy_ref, deck_dir))
        seats.add(task)
        task.add_done_callback(ended)
    if seats:
        await asyncio.wait(set(seats))
    return max(codes, default=0)
