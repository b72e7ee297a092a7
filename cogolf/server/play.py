"""Playing one match over real websockets with bots in their own processes.

Used by `cogolf play` and by league nights: a server on an ephemeral loopback
port (or an existing one), one match created on it, and one process per seat
that connects the way any bot would. A seat's process gets its URL both as
`{url}` in its command line and as `COGOLF_URL` in its environment.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

from cogolf import messages as m
from cogolf.server.requests import CreateMatch
from cogolf.server.run import RunningServer

log = structlog.get_logger("cogolf.play")

BOT_EXIT_GRACE = 10.0


def policy_command(
    policy: str, deck_dir: Path | None = None, transcripts: Path | None = None
) -> list[str]:
    """The command line that plays `policy` as a separate bot process; an LLM player
    (`llm:CONFIG.toml`) keeps its transcript in `transcripts`."""
    # -P: the current folder is not put on sys.path, so a folder named `cogolf` there
    # cannot stand in for the installed package.
    argv = [sys.executable, "-P", "-m", "cogolf", "bot", "--url", "{url}", "--policy", policy]
    if deck_dir is not None:
        argv += ["--deck", str(deck_dir)]
    if transcripts is not None and policy.startswith("llm:"):
        argv += ["--transcripts", str(transcripts)]
    return argv


class BotStartError(OSError):
    """A seat's bot process could not start, or exited before it ever connected."""


@dataclass(frozen=True)
class PlayedMatch:
    result: m.MatchResult | None
    replay_path: Path
    bot_exit_codes: list[int | None]


async def _launch(
    argv: Sequence[str], url: str, log_path: Path | None
) -> asyncio.subprocess.Process:
    env = dict(os.environ, COGOLF_URL=url)
    args = [a.replace("{url}", url) for a in argv]
    out = open(log_path, "ab") if log_path is not None else asyncio.subprocess.DEVNULL  # noqa: SIM115
    try:
        return await asyncio.create_subprocess_exec(
            *args,
            stdin=asyncio.subprocess.DEVNULL,
            stdout=out,
            stderr=out,
            env=env,
            start_new_session=True,
        )
    finally:
        if not isinstance(out, int):
            out.close()


async def play_on_server(
    server: RunningServer,
    request: CreateMatch,
    commands: Sequence[Sequence[str]],
    *,
    bot_log_dir: Path | None = None,
) -> PlayedMatch:
    """Create a match on `server`, start one bot process per seat, wait for the result.

    Raises BotStartError when a bot process cannot be started or exits before its
    seat ever connected (an infrastructure failure, which the league retries and then
    records as void); the half-started match is cancelled.
    """
    hosted, tokens = server.registry.create(request)
    assert hosted.task is not None
    procs: list[asyncio.subprocess.Process] = []
    try:
        for slot, argv in enumerate(commands):
            url = (
                f"{server.ws_url}/matches/{hosted.match_id}/player?slot={slot}&token={tokens[slot]}"
            )
            log_path = bot_log_dir / f"{hosted.match_id}.seat{slot}.log" if bot_log_dir else None
            try:
                procs.append(await _launch(argv, url, log_path))
            except OSError as exc:
                raise BotStartError(f"seat {slot}: cannot start {argv[0]!r}: {exc}") from exc
        waits = {asyncio.ensure_future(p.wait()): slot for slot, p in enumerate(procs)}
        while not hosted.task.done():
            done, _ = await asyncio.wait([hosted.task, *waits], return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                if fut is hosted.task:
                    continue
                slot = waits.pop(fut)
                if not hosted.seats[slot].ever_connected:
                    raise BotStartError(
                        f"seat {slot}: bot exited with code {fut.result()} before connecting"
                    )
        for fut in waits:
            fut.cancel()
        await hosted.task
    except BaseException:
        hosted.task.cancel()
        with contextlib.suppress(BaseException):
            await hosted.task
        raise
    finally:
        codes: list[int | None] = []
        for proc in procs:
            try:
                codes.append(await asyncio.wait_for(proc.wait(), timeout=BOT_EXIT_GRACE))
            except TimeoutError:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, 9)
                codes.append(await proc.wait())
    log.info("match_played", match_id=hosted.match_id, bot_exit_codes=codes)
    return PlayedMatch(hosted.result, hosted.replay_path, codes)
