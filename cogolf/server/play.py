"""Playing one match over real websockets with bots in their own processes.

Used by `cogolf play` and by league nights: a server on an ephemeral loopback
port (or an existing one), one match created on it, and a bot process per seat
that connects the way any bot would. A seat's process gets its URL both as
`{url}` in its command line and as `COGOLF_URL` in its environment. A seat may
also be served by a process shared with other matches (a league night's pooled
bots, `SeatStarter`): the match only needs to know when that process exits.

A bot process that exits before its seat connected fails the match at once (its
exit is awaited, not a timeout), and the other seats' processes are ended at
once too, so a bot that cannot start costs about its own start-up.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog

from cogolf import messages as m
from cogolf.sandbox.stop import stop_process
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


class SeatStarter(Protocol):
    """Who plays one seat of a match: started with its URL, ended after the match."""

    async def start(self, url: str, match_id: str) -> asyncio.Future[int]:
        """Have a process serve the seat at `url`; the future is its exit code.
        OSError when no process could be started."""
        ...

    async def finish(self, *, failed: bool) -> int | None:
        """After the match: the exit code of a process of this match alone (waited for,
        or ended at once when the match `failed`), None for a shared one."""
        ...


class ProcessSeat:
    """A bot process for this seat alone, started with the seat URL as `{url}`."""

    def __init__(self, argv: Sequence[str], log_name: Path | None = None) -> None:
        self.argv, self.log_name = list(argv), log_name  # `log_name` formats {match_id}
        self.proc: asyncio.subprocess.Process | None = None

    async def start(self, url: str, match_id: str) -> asyncio.Future[int]:
        log_path = (Path(str(self.log_name).replace("{match_id}", match_id))
                    if self.log_name else None)
        try:
            self.proc = await _launch(self.argv, url, log_path)
        except OSError as exc:
            raise OSError(f"cannot start {self.argv[0]!r}: {exc}") from exc
        return asyncio.ensure_future(self.proc.wait())

    async def finish(self, *, failed: bool) -> int | None:
        proc = self.proc
        if proc is None:
            return None
        if not failed:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(proc.wait(), timeout=BOT_EXIT_GRACE)
        # A failed match's other bots would only retry a match that is gone. Asked to
        # stop first: a walled bot's launcher then ends its bot's whole cgroup.
        return await stop_process(proc)


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
    seats = [
        ProcessSeat(argv, bot_log_dir / f"{{match_id}}.seat{slot}.log" if bot_log_dir else None)
        for slot, argv in enumerate(commands)
    ]
    return await play_seats(server, request, seats)


async def play_seats(
    server: RunningServer, request: CreateMatch, seats: Sequence[SeatStarter]
) -> PlayedMatch:
    """Create a match on `server`, have each seat served, wait for the result.

    Raises BotStartError when a seat's process cannot be started or exits before the
    seat ever connected; the half-started match is cancelled and its other processes
    ended at once."""
    hosted, tokens = server.registry.create(request)
    assert hosted.task is not None
    exits: dict[asyncio.Future[int], int] = {}
    failed = True
    try:
        for slot, seat in enumerate(seats):
            url = (
                f"{server.ws_url}/matches/{hosted.match_id}/player?slot={slot}&token={tokens[slot]}"
            )
            try:
                exits[await seat.start(url, hosted.match_id)] = slot
            except OSError as exc:
                raise BotStartError(f"seat {slot}: {exc}") from exc
        while not hosted.task.done():
            done, _ = await asyncio.wait([hosted.task, *exits], return_when=asyncio.FIRST_COMPLETED)
            for fut in done:
                if fut is hosted.task:
                    continue
                slot = exits.pop(fut)
                if not hosted.seats[slot].ever_connected:
                    raise BotStartError(
                        f"seat {slot}: bot exited with code {fut.result()} before connecting"
                    )
        await hosted.task
        failed = False
    except BaseException:
        hosted.task.cancel()
        with contextlib.suppress(BaseException):
            await hosted.task
        raise
    finally:
        codes = [await seat.finish(failed=failed) for seat in seats]
    log.info("match_played", match_id=hosted.match_id, bot_exit_codes=codes)
    return PlayedMatch(hosted.result, hosted.replay_path, codes)
