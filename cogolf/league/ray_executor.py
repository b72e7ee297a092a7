"""The Ray executor: a night's matches on Ray workers, each worker hosting many matches.

Every worker is a Ray actor (`NightWorker`, one CPU) holding a `NightHost` in a
scratch folder of its own on whichever machine runs it: one server for the
night and one pooled bot process per policy entrant, started on the worker's
first match and kept for the rest of the night, exactly as a night played on
this machine. A match comes back as its replay's bytes; the driver writes them
under the night's folder. So workers need the package and the pack, but no
shared filesystem, and the night's folder is only ever written from one place.
A match's LLM seats' transcripts come back with it (0600, beside the replay, as on
this machine). A night's agent attempts are tasks on the same workers too
(`league.ray_agents`), each worker running one model gateway for its LLM seats and
its agents. The driver hands a match or an attempt to whichever worker is free (one
at a time per worker, as the local executor plays one per core). Ray's own retries
are off: the shared retry-once-then-void rule applies, as with the local executor;
a worker that crashes fails the jobs it was playing and comes back for the next ones.
"""

from __future__ import annotations

import asyncio
import os
import shutil
import tempfile
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import structlog

from cogolf.agents import shared
from cogolf.agents.gateway import Gateway
from cogolf.league.host import NightHost
from cogolf.league.jobs import MatchJob
from cogolf.league.play import PlayError, policy_problem
from cogolf.league.ray_agents import AgentBack, AgentJob, RayAgents, play_on_worker
from cogolf.llm.transcript import TRANSCRIPTS_DIR, transcript_path

IN_FLIGHT = 100_000  # the workers bound a Ray night; this only avoids an unbounded gather
RESTART_WAIT = 60.0  # seconds a failed worker has to answer again before it gets matches
CLOSE_TIMEOUT = 60.0  # seconds for the workers to stop their servers and bots at the end

log = structlog.get_logger("cogolf.league")


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


@dataclass(frozen=True)
class MatchBack:
    """A match as a worker sends it back: its replay and its LLM seats' transcripts."""

    replay: bytes
    transcripts: dict[int, bytes] = field(default_factory=dict)  # by seat slot


class NightWorker:
    """The body of one Ray worker: one `NightHost` for every match it is given, one
    model gateway for its LLM seats and agent attempts."""

    def __init__(self) -> None:
        self.scratch = tempfile.mkdtemp(prefix="cogolf-league-")
        self.host: NightHost | None = None
        self.gateway: Gateway | None = None
        self.matches = 0
        self.agent_attempts = 0

    async def play(self, job: MatchJob) -> MatchBack:
        if self.host is None:
            # The driver checked every policy once for the night (`RayAttempt._checked`).
            self.host = NightHost(Path(self.scratch) / "replays", sandbox=job.sandbox,
                                  accept_weak_sandbox=job.accept_weak_sandbox,
                                  check_policies=False)
        self.matches += 1
        replays = self.host.replays_dir
        # A transcript is appended to: an earlier try's on this worker is not this one's.
        seats = [transcript_path(replays / TRANSCRIPTS_DIR, job.match_id, slot)
                 for slot in range(len(job.seats))]
        for seat in seats:
            seat.unlink(missing_ok=True)
        path = await self.host.play(job, replays)
        try:
            return MatchBack(path.read_bytes(), {slot: seat.read_bytes()
                                                 for slot, seat in enumerate(seats)
                                                 if seat.is_file()})
        finally:
            # The driver keeps them; the worker's disk stays small.
            for done in (path, *seats):
                done.unlink(missing_ok=True)

    async def agent(self, job: AgentJob) -> AgentBack:
        if self.gateway is None:
            self.gateway = shared.acquire()  # the one its LLM seats use too
        self.agent_attempts += 1
        return await play_on_worker(job, Path(self.scratch), self.gateway)

    async def ping(self) -> bool:
        return True

    def stats(self) -> dict[str, Any]:
        host = self.host
        queue = host.server.registry.sandbox if host and host.server else None
        return {
            "server_starts": host.server_starts if host else 0,
            "bot_starts": host.bot_starts if host else 0,
            "matches": self.matches,
            "agent_attempts": self.agent_attempts,
            "sandbox_batches": getattr(queue, "batches", 0),
            "sandbox_busy_seconds": getattr(queue, "busy_seconds", 0.0),
            "sandbox_queue_wait_seconds": getattr(queue, "wait_seconds", 0.0),
        }

    async def close(self) -> dict[str, Any]:
        """Stop the server and the pooled bots; what this worker did, for the totals."""
        stats = self.stats()
        if self.host is not None:
            await self.host.close()
            self.host = None
        if self.gateway is not None:
            shared.release()
            self.gateway = None
        shutil.rmtree(self.scratch, ignore_errors=True)
        return stats


class RayAttempt:
    """An `Attempt` that plays the match on a Ray worker. Use as a context manager: it
    starts (or connects to) Ray and its workers on entry, stops them on exit, and then
    `stats` sums what the workers did (servers and bot processes started, matches)."""

    def __init__(self, address: str | None, local_cpus: int) -> None:
        self.address = address
        self.local_cpus = local_cpus
        self.stats: dict[str, Any] = {}
        self._ray: Any = None
        self._workers: list[Any] = []
        self._free: asyncio.Queue[Any] | None = None  # the workers not playing a match
        self._loop: asyncio.AbstractEventLoop | None = None
        self._back: set[asyncio.Future[None]] = set()  # workers on their way back after a failure
        # Each entrant's policy is loaded behind the bot's walls once a night, here, not
        # by every worker (about 2 s each): its problem (or None) is kept for every match.
        self._checked: dict[tuple[str, str], asyncio.Future[str | None]] = {}
        self.agents = RayAgents(self)  # the night's agent attempts, on the same workers

    def __enter__(self) -> RayAttempt:
        try:
            import ray
        except ImportError:
            raise RayUnavailable(
                "executor = \"ray\" needs Ray: pip install 'cogolf[ray]'"
            ) from None
        options: dict[str, Any] = {
            "ignore_reinit_error": True,
            "include_dashboard": False,
            "log_to_driver": False,
        }
        if self.address:
            options["address"] = self.address
        else:
            options["num_cpus"] = self.local_cpus
        try:
            ray.init(**options)
            cpus = int(ray.cluster_resources().get("CPU", 1)) if self.address else self.local_cpus
        except Exception as exc:  # Ray raises many kinds of errors for an unreachable cluster
            raise RayUnavailable(f"cannot start or reach Ray: {type(exc).__name__}: {exc}") from exc
        self._ray = ray
        # One worker per CPU; a crashed worker restarts, its failed matches are retried as usual.
        worker = ray.remote(num_cpus=1, max_restarts=-1, max_task_retries=0)(NightWorker)
        self._workers = [worker.remote() for _ in range(max(1, cpus))]
        return self

    async def _when_alive(self, worker: Any, free: asyncio.Queue[Any]) -> None:
        """Give `worker` back once it answers (after a restart), or after RESTART_WAIT
        seconds anyway: its next match then fails and is retried or void, never stuck."""
        deadline = time.monotonic() + RESTART_WAIT
        while time.monotonic() < deadline:
            try:
                await asyncio.wrap_future(worker.ping.remote().future())
                break
            except Exception:  # unavailable while Ray restarts it
                await asyncio.sleep(0.25)
        free.put_nowait(worker)

    async def _check(self, job: MatchJob) -> None:
        for seat in job.seats:
            if seat.policy is None:
                continue
            key = (seat.name, seat.policy)
            if key not in self._checked:
                self._checked[key] = asyncio.ensure_future(
                    asyncio.to_thread(policy_problem, seat.policy, Path(job.deck)))
            problem = await asyncio.shield(self._checked[key])
            if problem is not None:
                raise PlayError(f"{seat.name}: {problem}")

    def __exit__(self, *exc: object) -> None:
        if self._ray is None:
            return
        try:
            closing = [w.close.remote() for w in self._workers]
            self.stats = {"workers": len(closing)}
            for ref in closing:
                try:
                    done = self._ray.get(ref, timeout=CLOSE_TIMEOUT)
                except Exception as exc:  # a lost worker: its processes went with it
                    log.warning("ray_worker_close_failed", error=f"{type(exc).__name__}: {exc}")
                    continue
                for key, value in done.items():
                    self.stats[key] = self.stats.get(key, 0) + value
        finally:
            self._workers, self._free = [], None
            self._ray.shutdown()
            self._ray = None

    async def on_worker(self, call: Callable[[Any], Any]) -> Any:
        """`call(worker)` (a Ray method call) on the first free worker; its answer."""
        if not self._workers:
            raise RayUnavailable("RayAttempt used outside its `with` block")
        loop = asyncio.get_running_loop()
        if self._free is None or self._loop is not loop:  # a queue belongs to one event loop
            self._free, self._loop = asyncio.Queue(), loop
            for w in self._workers:
                self._free.put_nowait(w)
        free = self._free
        worker = await free.get()
        try:
            answer = await asyncio.wrap_future(call(worker).future())
        except BaseException:
            # The worker may have died with the job: the retry must not find it restarting.
            back = asyncio.ensure_future(self._when_alive(worker, free))
            self._back.add(back)
            back.add_done_callback(self._back.discard)
            raise
        free.put_nowait(worker)
        return answer

    async def __call__(self, job: MatchJob, replays_dir: Path) -> Path:
        await self._check(job)
        back: MatchBack = await self.on_worker(lambda worker: worker.play.remote(job))
        path = Path(replays_dir) / job.replay_name
        path.parent.mkdir(parents=True, exist_ok=True)
        for slot, data in sorted(back.transcripts.items()):
            _append_private(transcript_path(path.parent / TRANSCRIPTS_DIR, job.match_id, slot),
                            data)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(back.replay)
        tmp.replace(path)
        return path


def _append_private(path: Path, data: bytes) -> None:
    """A seat's transcript, appended to as on this machine (a retried match's tries are
    one file): 0600 in a 0700 folder, never through a link."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_APPEND | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "ab") as f:
        f.write(data)
