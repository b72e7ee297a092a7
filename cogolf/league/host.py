"""One server and one bot process per policy entrant for a whole night.

Starting a server and two bot processes for every match costs about a second of
process start-up per match, more than the match itself when bots answer at once.
A night played on this machine therefore starts one server (on the first match
it plays) and hosts every match on it, created through the server's registry
like any `POST /matches` (which the server refuses to anyone else: it runs with
an admin token no bot ever sees). A policy entrant (built-in, `file.py:name`,
`module:name`) plays every one of its seats from one walled `cogolf bot
--seats-from-stdin` process (`bots.pool`), started when its first seat is
needed and again if it ever exits. A `command` entrant is a program run with
`{url}`, so it still gets a process per match, started only once the match
exists. A match is played exactly as before (same request, same seeds, same
journal), and the match is forgotten by the server once it is over, so a retry
can reuse its id.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import secrets
import shutil
import tempfile
from pathlib import Path
from typing import TYPE_CHECKING

import structlog

from cogolf.deck import Deck
from cogolf.league.botwall import BotSetupError
from cogolf.league.jobs import MatchJob, Seat
from cogolf.league.llmseat import LLMSeats
from cogolf.league.night import MAX_PARALLEL
from cogolf.league.play import (
    CONNECT_TIMEOUT,
    LOGS_DIR,
    PlayError,
    check_deck,
    check_policies,
    job_deck,
    log_path,
    play_job,
    pool_command,
    pool_log_path,
    process_seat,
)
from cogolf.llm.entrant import PREFIX as LLM_PREFIX
from cogolf.sandbox.stop import stop_process
from cogolf.sandbox.uids import sweep_unleased

if TYPE_CHECKING:
    from cogolf.server.play import SeatStarter
    from cogolf.server.run import RunningServer

log = structlog.get_logger("cogolf.league")

POOL_EXIT_GRACE = 10.0  # seconds a pooled bot has to finish once its input is closed
SEATS_PER_ADDRESS = 4 * MAX_PARALLEL + 16  # seats and their reconnections, all from loopback


class BotPool:
    """The one bot process of a policy entrant, fed seat URLs on its stdin."""

    def __init__(self, name: str, argv: list[str], server_ws_url: str) -> None:
        self.name, self.argv, self.server_ws_url = name, argv, server_ws_url
        self.proc: asyncio.subprocess.Process | None = None
        self.exited: asyncio.Future[int] | None = None
        self.starts = 0  # processes started, for the benchmark
        self._lock = asyncio.Lock()

    async def _running(self) -> tuple[asyncio.subprocess.Process, asyncio.Future[int]]:
        async with self._lock:
            if self.proc is None or self.exited is None or self.exited.done():
                env = dict(os.environ, COGOLF_URL=self.server_ws_url)  # the port it may reach
                self.proc = await asyncio.create_subprocess_exec(
                    *self.argv,
                    stdin=asyncio.subprocess.PIPE,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                    env=env,
                    start_new_session=True,
                )
                self.exited = asyncio.ensure_future(self.proc.wait())
                self.starts += 1
                log.info("bot_pool_started", entrant=self.name, pid=self.proc.pid)
            return self.proc, self.exited

    async def seat(self, url: str) -> asyncio.Future[int]:
        """Hand the process one more seat; the future is the process's exit."""
        proc, exited = await self._running()
        assert proc.stdin is not None
        # A process that just died leaves a broken pipe: its exit tells the match why.
        with contextlib.suppress(ConnectionError, RuntimeError):
            proc.stdin.write(url.encode() + b"\n")
            await proc.stdin.drain()
        return exited

    async def close(self) -> None:
        proc = self.proc
        if proc is None or proc.returncode is not None:
            return
        assert proc.stdin is not None
        with contextlib.suppress(ConnectionError, RuntimeError):
            proc.stdin.close()
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(proc.wait(), timeout=POOL_EXIT_GRACE)
        await stop_process(proc)  # its launcher ends the bot's whole cgroup


class PoolSeat:
    """A seat served by its entrant's pooled process (which outlives the match)."""

    def __init__(self, pool: BotPool) -> None:
        self.pool = pool

    async def start(self, url: str, match_id: str) -> asyncio.Future[int]:
        return await self.pool.seat(url)

    async def finish(self, *, failed: bool) -> int | None:
        return None


class NightHost:
    """The night's server and pooled bots; `play` is an executor's attempt at a match."""

    def __init__(self, replays_dir: Path, *, sandbox: str = "fork",
                 accept_weak_sandbox: bool = False, pooled: bool = True,
                 check_policies: bool = True) -> None:
        self.replays_dir = Path(replays_dir)
        self.sandbox, self.accept_weak_sandbox, self.pooled = sandbox, accept_weak_sandbox, pooled
        self.server: RunningServer | None = None
        self.deck: Deck | None = None
        self.pools: dict[str, BotPool] = {}
        self.server_starts = 0  # servers started, for the Ray workers' totals and the tests
        self._bots = ""  # the bots' scratch folders
        self._scratch = ""  # the server's metadata files
        self._start_lock = asyncio.Lock()
        # Only this process creates the night's matches (through the registry); the token
        # exists so that `POST /matches` from anyone else is refused. It is never passed on.
        self._admin_token = secrets.token_urlsafe(32)
        self._policy_checked: set[tuple[str, str]] = set()
        self._check = check_policies  # False: the caller checked them (a Ray night's driver)
        self.llm = LLMSeats()  # the walled LLM seats' gateway, started with the first one

    async def __aenter__(self) -> NightHost:
        return self

    async def __aexit__(self, *exc: object) -> None:
        await self.close()

    async def _server_for(self, job: MatchJob) -> tuple[RunningServer, Deck]:
        async with self._start_lock:
            if self.server is None:
                from cogolf.games.registry import LIVE
                from cogolf.server.run import ServeOptions, start_server

                deck = job_deck(job)
                (self.replays_dir / LOGS_DIR).mkdir(parents=True, exist_ok=True)
                # The bots' scratch folders: others may pass through, not list it.
                self._bots = tempfile.mkdtemp(prefix="cogolf-bots-")
                os.chmod(self._bots, 0o711)
                self._scratch = tempfile.mkdtemp(prefix="cogolf-league-")
                self.server = await start_server(
                    ServeOptions(
                        games=LIVE,
                        data_dir=Path(self._scratch),
                        replays_dir=self.replays_dir,
                        meta_dir=Path(self._scratch),
                        decks={deck.name: deck},
                        port=0,
                        sandbox_mode=self.sandbox,
                        accept_weak_sandbox=self.accept_weak_sandbox,
                        connect_timeout=CONNECT_TIMEOUT,
                        resume=False,
                        admin_token=self._admin_token,
                        # Every bot connects from loopback, two seats per match at once.
                        max_connections_per_address=SEATS_PER_ADDRESS,
                    )
                )
                self.deck = deck
                self.server_starts += 1
                log.info("night_server_started", url=self.server.url)
            assert self.deck is not None
            return self.server, self.deck

    def _pool(self, seat: Seat, deck_dir: Path, server: RunningServer) -> BotPool:
        assert seat.policy is not None
        pool = self.pools.get(seat.name)
        if pool is None:
            pool_log = pool_log_path(self.replays_dir, seat.name)
            pool_log.parent.mkdir(parents=True, exist_ok=True)
            try:
                argv = pool_command(seat.policy, deck_dir, pool_log, self._bots)
            except BotSetupError as exc:
                raise PlayError(f"{seat.name}: {exc}") from None
            pool = self.pools[seat.name] = BotPool(seat.name, argv, server.ws_url)
        return pool

    def _check_policies(self, job: MatchJob) -> None:
        """Load each policy once a night (a failure is reported for every match)."""
        todo = [s for s in job.seats if s.policy is not None and self._check
                and (s.name, s.policy) not in self._policy_checked]
        if todo:
            check_policies(job)
            self._policy_checked.update((s.name, s.policy or "") for s in todo)

    async def play(self, job: MatchJob, replays_dir: Path) -> Path:
        if Path(replays_dir) != self.replays_dir:
            raise PlayError(f"this night's server writes to {self.replays_dir}, not {replays_dir}")
        server, deck = await self._server_for(job)
        check_deck(job, deck)
        self._check_policies(job)
        seats: list[SeatStarter] = []
        logs: list[Path] = []
        for seat in job.seats:
            # An LLM seat is a process per match: its gateway token is valid for that match.
            if seat.policy is not None and self.pooled and not seat.policy.startswith(LLM_PREFIX):
                seats.append(PoolSeat(self._pool(seat, Path(job.deck), server)))
                logs.append(pool_log_path(self.replays_dir, seat.name))
            else:
                seats.append(process_seat(job, seat, self.replays_dir, self._bots, self.llm))
                logs.append(log_path(self.replays_dir, job.match_id, seat.name))
        return await play_job(server, job, deck, self.replays_dir, seats, logs,
                              release=server.registry.release)

    @property
    def bot_starts(self) -> int:
        return sum(p.starts for p in self.pools.values())

    async def close(self) -> None:
        await asyncio.gather(*(pool.close() for pool in self.pools.values()))
        self.llm.close()
        if self.server is not None:
            await self.server.stop()
            self.server = None
        # A launcher killed during the night (not by us) dropped its bot's lease unclean:
        # what that bot left running ends here, not at the next lease of its uid.
        await asyncio.to_thread(sweep_unleased)
        for folder in (self._bots, self._scratch):
            if folder:
                shutil.rmtree(folder, ignore_errors=True)
