"""What the spawn and fork sandboxes share: start-up checks, leases, one batch's frame.

Both modes run the same session over the same walls; they differ only in how a
walled child comes to exist. Start-up runs a probe batch and reads which walls
the child could put up; a missing wall is refused unless the operator accepted a
weaker sandbox, and is then announced loudly. Fork mode keeps a few children
started ahead of demand (each under its own uid, used for one batch only); spawn
mode, the baseline, starts an interpreter per batch.

A batch may ask for a hash seed (a match fixes one, so string hashing, and with it
set and dict order, is the same in the match, its verification and its re-run).
Children are kept ready per hash seed, for the few seeds used most recently.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import tempfile
import time
from collections import OrderedDict
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import structlog

from cogolf.sandbox.api import DEFAULT_LIMITS, BatchResult, Limits, LoadStatus
from cogolf.sandbox.cgroups import SANDBOX_PREFIX, UidGroups, available_bases
from cogolf.sandbox.interpreter import MAX_HASH_SEED, real_python
from cogolf.sandbox.session import ChildProcess, await_ready, harness_error, run_session
from cogolf.sandbox.uids import lease_uid
from cogolf.sandbox.workers import Workers

log = structlog.get_logger(__name__)

PROBE_SOURCE = "def solve():\n    return 1\n"
PY_CONTROLLERS = ("pids", "memory")  # CPU comes from /proc: one task per child


POOL_SIZE = 6
"""Children pre-forked per hash seed: one hole runs six batches, four then two."""
_PREFORK_TIMEOUT = 10.0
_POOL_GIVE_UP = 3  # consecutive pre-fork failures after which children start on demand
MAX_HASH_SEEDS = 8
"""Fork servers kept per sandbox, one per hash seed (more only while all are forking)."""
MAX_POOLS = 4
"""Hash seeds with children kept ready; a seed gives its place up only once unused for
`POOL_IDLE_SECONDS`, so many seeds at once never churn pre-forked children."""
POOL_IDLE_SECONDS = 2.0


@dataclass
class _Warm:
    """A pre-forked child, its walls reported, holding its uid lease."""

    child: ChildProcess
    held: contextlib.ExitStack
    uid: int
    memory: int | None  # the memory limit its groups were given when it was forked


def _cpu_backstop(limits: Limits, calls: Sequence[list[Any]]) -> int:
    return math.ceil(limits.load_cpu_seconds + len(calls) * limits.cpu_seconds_per_call) + 2


class WeakSandboxError(RuntimeError):
    """Some kernel wall is missing on this machine and weak sandboxes were not accepted."""

    def __init__(self, missing: dict[str, str]) -> None:
        detail = "; ".join(f"{k}: {v}" for k, v in sorted(missing.items()))
        super().__init__(
            f"sandbox walls missing ({detail}); refusing to run untrusted programs "
            "(pass --accept-weak-sandbox to run anyway)"
        )
        self.missing = missing


def missing_walls(walls: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in walls.items() if v.startswith("missing")}


class BaseSandbox:
    mode = "base"

    def __init__(self, *, accept_weak: bool = False, python: str | None = None,
                 pool_size: int = POOL_SIZE) -> None:
        self.accept_weak = accept_weak
        self.pool_size = pool_size
        # Pre-forked children per hash seed (None: the sandbox's own), least recently
        # used first.
        self._pools: OrderedDict[int | None, list[_Warm]] = OrderedDict()
        self._refilling: dict[int | None, asyncio.Future[None]] = {}
        self._pool_used: dict[int | None, float] = {}
        self._pool_failures = 0
        self._uid_groups: dict[int, UidGroups] = {}  # the directories only, made once
        self._python_override = python
        self.python = ""
        self.walls: dict[str, str] = {}
        self._bases: dict[str, str] = {}
        self._work = ""
        self._cwd = ""
        self._cwd_stamp = 0
        self._started = False
        self._cleanups: set[asyncio.Future[None]] = set()
        self.workers = Workers(self._worker_child, self._finish)

    # --- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        self.python = self._python_override or real_python()
        self._bases = available_bases(PY_CONTROLLERS) if os.geteuid() == 0 else {}
        self._work = tempfile.mkdtemp(prefix="cogolf-sandbox-")
        os.chmod(self._work, 0o711)
        # One working directory for every child: owned by root and writable by no
        # one else, and Landlock grants no right in it, so it stays empty; a change
        # of its modification time would show otherwise.
        self._cwd = os.path.join(self._work, "cwd")
        os.mkdir(self._cwd, 0o111)
        os.chmod(self._cwd, 0o111)
        self._cwd_stamp = os.stat(self._cwd).st_mtime_ns
        await self._start_mode()
        self._started = True
        probe = await self._batch(PROBE_SOURCE, [[]], "solve", DEFAULT_LIMITS, strict=False,
                                  hash_seed=self.first_seed)
        if probe.load is LoadStatus.HARNESS_ERROR:
            await self.close()
            raise RuntimeError(f"sandbox ({self.mode}) cannot start: {probe.load_detail}")
        missing = missing_walls(self.walls)
        if missing:
            if not self.accept_weak:
                await self.close()
                raise WeakSandboxError(missing)
            log.warning("WEAK SANDBOX: walls missing, running anyway as requested",
                        mode=self.mode, missing=missing)
        log.info("sandbox ready", mode=self.mode, walls=self.walls)
        self._refill(self.first_seed)

    @property
    def first_seed(self) -> int | None:
        """The hash seed of the first batches: the start-up probe's, and the children
        forked ahead at start (None: the sandbox's own)."""
        return None

    async def close(self) -> None:
        self._started = False
        self.workers.close()
        fills = [self._drop_pool(seed) for seed in list(self._pools)]
        for filling in fills:
            if filling is not None:
                with contextlib.suppress(asyncio.CancelledError, Exception):
                    await filling
        await self.drain()
        await self._close_mode()
        if self._work:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = ""
        self._started = False

    async def _start_mode(self) -> None:
        return None

    async def _close_mode(self) -> None:
        return None

    # --- batches ---------------------------------------------------------------

    async def run_batch(
        self,
        source: str,
        calls: Sequence[list[Any]],
        *,
        function: str = "solve",
        limits: Limits = DEFAULT_LIMITS,
        label: str = "",
        hash_seed: int | None = None,
        trusted: bool = False,
    ) -> BatchResult:
        started = time.monotonic()
        if not self._started:
            return harness_error(len(calls), "sandbox not started", started)
        if hash_seed is not None and not 0 <= hash_seed <= MAX_HASH_SEED:
            return harness_error(len(calls), f"hash seed {hash_seed} out of range", started)
        try:
            result = await self._batch(source, calls, function, limits,
                                       strict=not self.accept_weak, hash_seed=hash_seed,
                                       trusted=trusted)
        except Exception as exc:  # the sandbox's own failure, never the program's
            log.exception("sandbox batch failed", mode=self.mode, label=label)
            return harness_error(len(calls), f"{type(exc).__name__}: {exc}", started)
        if result.load is LoadStatus.HARNESS_ERROR:
            log.error("sandbox harness error", mode=self.mode, label=label,
                      detail=result.load_detail)
        return result

    async def diagnose(self, source: str, calls: Sequence[list[Any]]) -> BatchResult:
        """A batch with the audit hook off, so `cogolf doctor` tests the kernel walls alone."""
        return await self._batch(source, calls, "solve", DEFAULT_LIMITS, strict=False,
                                 audit_hook=False, hash_seed=None)

    async def _batch(self, source: str, calls: Sequence[list[Any]], function: str,
                     limits: Limits, *, strict: bool, hash_seed: int | None,
                     audit_hook: bool = True, trusted: bool = False) -> BatchResult:
        started = time.monotonic()
        if trusted and strict == self._pool_strict and audit_hook:
            served = await self.workers.run(source, calls, function, limits, hash_seed, started)
            if served is not None:
                return served
        rlimits = {"memory": limits.memory_bytes, "cpu_backstop": _cpu_backstop(limits, calls)}
        warm = self._take_warm(hash_seed) if strict == self._pool_strict and audit_hook else None
        if warm is not None:
            held, child = warm.held, warm.child
            try:
                if limits.memory_bytes != warm.memory:  # its lease held since: else as set
                    self._groups(warm.uid, limits)
                child.reader.set_caps(max_line=limits.max_result_line_bytes,
                                      max_total=limits.max_result_bytes)
                return await run_session(child, source, calls, function=function,
                                         limits=limits, started=started, rlimits=rlimits,
                                         ready=True)
            finally:
                self._finish(child, held)
        held = contextlib.ExitStack()
        uid = held.enter_context(lease_uid())
        child = None
        try:
            groups = self._groups(uid, limits)
            cfg = self._config(uid, groups, strict=strict, audit_hook=audit_hook, **rlimits)
            child = await self._launch(cfg, groups, limits, hash_seed)
            if child is None:
                return harness_error(len(calls), "sandbox child could not be started", started)
            result = await run_session(child, source, calls, function=function,
                                       limits=limits, started=started, rlimits=rlimits)
            if child.walls:
                self.walls = child.walls
            return result
        finally:
            self._finish(child, held)

    async def _worker_child(self, hash_seed: int | None, limits: Limits,
                            rlimits: dict[str, int]
                            ) -> tuple[ChildProcess | None, contextlib.ExitStack, bool]:
        """A walled child for a worker (`workers`), ready or fresh, its lease in the stack."""
        warm = self._take_warm(hash_seed)
        if warm is not None:
            if limits.memory_bytes != warm.memory:
                self._groups(warm.uid, limits)
            warm.child.reader.set_caps(max_line=limits.max_result_line_bytes,
                                       max_total=limits.max_result_bytes)
            return warm.child, warm.held, True
        held = contextlib.ExitStack()
        try:
            uid = held.enter_context(lease_uid())
            groups = self._groups(uid, limits)
            cfg = self._config(uid, groups, strict=self._pool_strict, audit_hook=True,
                               memory=rlimits["memory"], cpu_backstop=rlimits["cpu_backstop"])
            return await self._launch(cfg, groups, limits, hash_seed), held, False
        except Exception:
            log.exception("starting a sandbox worker failed", mode=self.mode)
            return None, held, False

    def _config(self, uid: int, groups: UidGroups | None, *, strict: bool, audit_hook: bool,
                memory: int | None, cpu_backstop: int | None) -> dict[str, Any]:
        return {
            "uid": uid if os.geteuid() == 0 else None,
            "cgroups": groups.join_paths() if groups else [],
            "cwd": self._cwd,
            "memory": memory,
            "cpu_backstop": cpu_backstop,
            "strict": strict,
            "audit_hook": audit_hook,
        }

    def _finish(self, child: ChildProcess | None, held: contextlib.ExitStack) -> None:
        # The kill is immediate; waiting for the exit and the reap, and freeing the
        # uid, happen after the result is handed back.
        if child is not None:
            child.kill()
        task = asyncio.ensure_future(self._cleanup(child, held))
        self._cleanups.add(task)
        task.add_done_callback(self._cleanups.discard)

    # --- pre-forked children ---------------------------------------------------
    # A few children are started ahead of demand, each under its own leased uid and
    # cgroups with every wall up, waiting for a program. Each runs exactly one batch.
    # Limits known only per batch (RLIMIT_AS, RLIMIT_CPU) are lowered by the child's
    # runner when the request arrives, before the program is compiled.

    @property
    def _pool_strict(self) -> bool:
        return not self.accept_weak

    def _take_warm(self, hash_seed: int | None) -> _Warm | None:
        warm = None
        pool = self._pools.get(hash_seed, [])
        while pool:
            cand = pool.pop(0)
            if cand.child.exited():
                self._finish(cand.child, cand.held)
                continue
            warm = cand
            break
        self._refill(hash_seed)
        return warm

    def _refill(self, hash_seed: int | None) -> None:
        if self.pool_size <= 0 or not self._started or self._pool_failures >= _POOL_GIVE_UP:
            return
        now = time.monotonic()
        if hash_seed not in self._pools and len(self._pools) >= MAX_POOLS:
            stale = next(iter(self._pools))
            if now - self._pool_used.get(stale, 0.0) < POOL_IDLE_SECONDS:
                return  # every place is in use: this seed's children start on demand
            self._drop_pool(stale)
        self._pools.setdefault(hash_seed, [])
        self._pools.move_to_end(hash_seed)
        self._pool_used[hash_seed] = now
        filling = self._refilling.get(hash_seed)
        if filling is None or filling.done():
            self._refilling[hash_seed] = asyncio.ensure_future(self._fill(hash_seed))

    def _drop_pool(self, hash_seed: int | None) -> asyncio.Future[None] | None:
        """Finish a hash seed's ready children; returns its refill, cancelled (a child
        it was starting is finished once the cancellation reaches it)."""
        pool = self._pools.pop(hash_seed, [])
        self._pool_used.pop(hash_seed, None)
        filling = self._refilling.pop(hash_seed, None)
        if filling is not None:
            filling.cancel()
        for warm in pool:
            self._finish(warm.child, warm.held)
        return filling

    async def _fill(self, hash_seed: int | None) -> None:
        while self._started:
            pool = self._pools.get(hash_seed)
            if pool is None or len(pool) >= self.pool_size:
                return
            warm = await self._prefork(hash_seed)
            if warm is None:
                return
            pool = self._pools.get(hash_seed)
            if not self._started or pool is None:
                self._finish(warm.child, warm.held)
                return
            pool.append(warm)

    async def _prefork(self, hash_seed: int | None) -> _Warm | None:
        held = contextlib.ExitStack()
        uid = held.enter_context(lease_uid())
        child: ChildProcess | None = None
        failure = ""
        try:
            groups = self._groups(uid, DEFAULT_LIMITS)
            cfg = self._config(uid, groups, strict=self._pool_strict, audit_hook=True,
                               memory=None, cpu_backstop=None)
            child = await self._launch(cfg, groups, DEFAULT_LIMITS, hash_seed)
            if child is None:
                failure = "sandbox child could not be started"
            else:
                failure = await await_ready(child, time.monotonic() + _PREFORK_TIMEOUT,
                                            _PREFORK_TIMEOUT)
        except Exception as exc:
            failure = f"{type(exc).__name__}: {exc}"
        except BaseException:
            self._finish(child, held)
            raise
        if failure or child is None:
            self._finish(child, held)
            self._pool_failures += 1
            log.warning("pre-forking a sandbox child failed", mode=self.mode, detail=failure,
                        failures=self._pool_failures)
            return None
        self._pool_failures = 0
        return _Warm(child, held, uid, DEFAULT_LIMITS.memory_bytes if groups else None)

    def _groups(self, uid: int, limits: Limits) -> UidGroups | None:
        if not self._bases:
            return None
        groups = self._uid_groups.get(uid)
        if groups is None:
            groups = self._uid_groups[uid] = UidGroups.create(uid, self._bases, SANDBOX_PREFIX)
        # Read back rather than remembered: another server on this machine may have
        # held this uid (and written its own limits) since this one last did.
        if not groups.configured(max_tasks=1, memory_bytes=limits.memory_bytes):
            groups.configure(max_tasks=1, memory_bytes=limits.memory_bytes)
        return groups

    async def _cleanup(self, child: ChildProcess | None, held: contextlib.ExitStack) -> None:
        with held:  # the uid lease ends only once the child is dead and reaped
            if child is not None:
                try:
                    await child.kill_and_reap()
                finally:
                    child.close()
            with contextlib.suppress(OSError):
                if os.stat(self._cwd).st_mtime_ns != self._cwd_stamp:
                    log.error("sandbox working directory changed", path=self._cwd,
                              entries=os.listdir(self._cwd)[:10])

    async def drain(self) -> None:
        """Wait until every child of finished batches is dead and reaped."""
        while self._cleanups:
            await asyncio.gather(*list(self._cleanups), return_exceptions=True)

    async def _launch(self, cfg: dict[str, Any], groups: UidGroups | None,
                      limits: Limits, hash_seed: int | None) -> ChildProcess | None:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "python": self.python,
            "walls": dict(self.walls),
            "weak": bool(missing_walls(self.walls)),
            "accept_weak": self.accept_weak,
            "pre_forked": self.pool_size,
        }
