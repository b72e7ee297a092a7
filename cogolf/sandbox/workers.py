"""Walled children that serve many batches of one trusted program (a hole's reference).

A reference is our own code on untrusted arguments, and pure: the same arguments
give the same answer whatever ran before. Loading it into a fresh child for every
hole costs a fork, the walls and a load per hole, so a reference runs in a worker
instead: a child like any other (its own uid, cgroups, every wall, the audit hook),
loaded once, that answers the calls of several batches, each under the batch's own
per-call CPU, wall clock and output budgets. Nothing else is shared: each worker
serves one program text under one set of limits and one hash seed, and one batch at
a time.

A worker's history must never show in a verdict, so only a worker that has answered
nothing but values serves again, and any answer other than a value (an exception, a
timeout, a crash, an invalid value) from a worker that served an earlier batch is
not taken: the worker is retired and that call and the rest run again in a fresh
worker, whose first batch is judged exactly as a one-batch child's (that is the
verdict). So is a value that took more than half its CPU budget, which a warm
worker (its caches, its quickened code) may have found faster than a fresh child.
A worker is also retired after `MAX_CALLS` calls (its CPU backstop covers that
many), when it grew `MAX_GROWTH` bytes past its size after loading, and after
`IDLE_SECONDS` unused; at most `MAX_WORKERS` are kept.
"""

from __future__ import annotations

import contextlib
import math
import os
import time
from collections import OrderedDict
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, Limits, LoadStatus
from cogolf.sandbox.session import (
    ChildProcess,
    WallBudget,
    call_all,
    load,
    running,
)

MAX_CALLS = 400
"""Calls one worker answers before it is retired; its RLIMIT_CPU covers them all."""
MAX_WORKERS = 16
"""Workers kept at once (a night's deck has a dozen references per hash seed in use)."""
IDLE_SECONDS = 30.0
MAX_GROWTH = 32 * 1024 * 1024
"""Resident bytes a worker may grow past its size after loading before it is retired."""
SLOW_SHARE = 0.5
"""An answer from a reused worker that took more than this share of its call's CPU
budget is not taken either (see `Workers.run`)."""
_PAGE = os.sysconf("SC_PAGE_SIZE")

Key = tuple[Any, ...]
# (hash seed) -> a walled child, ready, its uid lease held; how the sandbox makes one
Launch = Callable[[int | None, Limits, dict[str, int]],
                  Awaitable[tuple[ChildProcess | None, contextlib.ExitStack, bool]]]
Finish = Callable[[ChildProcess | None, contextlib.ExitStack], None]


def worker_key(source: str, function: str, limits: Limits, hash_seed: int | None) -> Key:
    """What a batch must share with a worker's program to run on it."""
    return (source, function, hash_seed, limits.cpu_seconds_per_call, limits.load_cpu_seconds,
            limits.memory_bytes, limits.max_result_line_bytes)


def worker_rlimits(limits: Limits) -> dict[str, int]:
    return {"memory": limits.memory_bytes,
            "cpu_backstop": math.ceil(limits.load_cpu_seconds
                                      + MAX_CALLS * limits.cpu_seconds_per_call) + 2}


@dataclass(eq=False)
class Worker:
    child: ChildProcess
    held: contextlib.ExitStack
    key: Key
    calls: int = 0  # answered so far, which is also the next call's sequence number
    batches: int = 0
    loaded_rss: int = 0
    retired: bool = False
    used_at: float = field(default_factory=time.monotonic)

    def rss(self) -> int:
        if self.child.stat_fd is None:
            return 0
        try:
            fields = os.pread(self.child.stat_fd, 1024, 0).rsplit(b")", 1)[1].split()
            return int(fields[21]) * _PAGE
        except (OSError, IndexError, ValueError):
            return 0


class Workers:
    """The workers of one sandbox; `run` is one trusted batch, or None when it should
    run in a child of its own (too many calls for a worker, or every place taken)."""

    def __init__(self, launch: Launch, finish: Finish) -> None:
        self._launch = launch
        self._finish = finish
        self._idle: OrderedDict[Worker, None] = OrderedDict()  # least recently used first
        self._busy: set[Worker] = set()
        self.started = 0  # workers made, for tests and benchmarks
        self.reused = 0  # batches served by a worker that had served one before

    def close(self) -> None:
        for worker in [*self._idle, *self._busy]:
            self._retire(worker)

    async def run(self, source: str, calls: Sequence[list[Any]], function: str,
                  limits: Limits, hash_seed: int | None, started: float) -> BatchResult | None:
        if not calls or len(calls) > MAX_CALLS:
            return None
        key = worker_key(source, function, limits, hash_seed)
        self._expire()
        worker = self._take(key, len(calls))
        if worker is None:
            if not self._make_room():
                return None
            return await self._fresh(key, source, calls, function, limits, hash_seed, started)
        results = await self._reuse(worker, calls, limits, started)
        # A slow answer may owe its speed to a warm worker (caches, quickened code): it
        # is checked afresh too, so a call near its limit is judged as a fresh child would.
        slow = limits.cpu_seconds_per_call * SLOW_SHARE
        done = next((i for i, r in enumerate(results)
                     if r.status is not CallStatus.OK or r.cpu_seconds > slow), len(results))
        if done < len(results):
            # Not taken from a worker with a past (retired already): from that call
            # on, run afresh.
            if not self._make_room():
                rest = "a reused worker gave no value: to be run again"
                results[done:] = [CallResult(status=CallStatus.NOT_RUN, detail=rest)] * (
                    len(results) - done)
            else:
                again = await self._fresh(key, source, calls[done:], function, limits,
                                          hash_seed, time.monotonic())
                results[done:] = again.results
        return BatchResult(load=LoadStatus.OK, results=results,
                           wall_seconds=time.monotonic() - started)

    def _take(self, key: Key, n: int) -> Worker | None:
        for worker in self._idle:
            if worker.key == key:
                del self._idle[worker]
                if worker.child.exited() or worker.calls + n > MAX_CALLS:
                    self._retire(worker)
                    return self._take(key, n)
                return worker
        return None

    def _expire(self) -> None:
        now = time.monotonic()
        for worker in [w for w in self._idle if now - w.used_at > IDLE_SECONDS]:
            del self._idle[worker]
            self._retire(worker)

    def _make_room(self) -> bool:
        while len(self._idle) + len(self._busy) >= MAX_WORKERS:
            if not self._idle:
                return False
            oldest = next(iter(self._idle))
            del self._idle[oldest]
            self._retire(oldest)
        return True

    def _retire(self, worker: Worker) -> None:
        self._busy.discard(worker)
        self._idle.pop(worker, None)
        if not worker.retired:
            worker.retired = True
            self._finish(worker.child, worker.held)

    async def _fresh(self, key: Key, source: str, calls: Sequence[list[Any]], function: str,
                     limits: Limits, hash_seed: int | None, started: float) -> BatchResult:
        rlimits = worker_rlimits(limits)
        child, held, ready = await self._launch(hash_seed, limits, rlimits)
        if child is None:
            self._finish(None, held)
            return _not_started(len(calls), started)
        worker = Worker(child, held, key)
        self._busy.add(worker)
        self.started += 1
        try:
            with running(child):
                wall = WallBudget(child, limits.wall_seconds_per_batch, started)
                failed = await load(child, source, function=function, limits=limits,
                                    wall=wall, rlimits=rlimits, ready=ready,
                                    n_calls=len(calls))
                if failed is not None:
                    self._retire(worker)
                    return failed
                worker.loaded_rss = worker.rss()
                results = await call_all(child, calls, limits, wall)
        except BaseException:  # cancelled mid-batch: its child's state is unknown
            self._retire(worker)
            raise
        # A fresh worker's first batch is judged as a one-batch child's: as it is.
        self._done(worker, results)
        return BatchResult(load=LoadStatus.OK, results=results,
                           wall_seconds=time.monotonic() - started)

    async def _reuse(self, worker: Worker, calls: Sequence[list[Any]], limits: Limits,
                     started: float) -> list[CallResult]:
        self._busy.add(worker)
        self.reused += 1
        child = worker.child
        child.reader.set_caps(max_line=limits.max_result_line_bytes,
                              max_total=limits.max_result_bytes)
        try:
            with running(child):
                results = await call_all(
                    child, calls, limits,
                    WallBudget(child, limits.wall_seconds_per_batch, started),
                    first_seq=worker.calls)
        except BaseException:
            self._retire(worker)
            raise
        self._done(worker, results)
        return results

    def _done(self, worker: Worker, results: list[CallResult]) -> None:
        self._busy.discard(worker)
        worker.calls += len(results)
        worker.batches += 1
        worker.used_at = time.monotonic()
        # Only a worker that has answered nothing but values serves again.
        spent = worker.calls >= MAX_CALLS or worker.rss() > worker.loaded_rss + MAX_GROWTH
        if spent or worker.child.exited() or any(r.status is not CallStatus.OK for r in results):
            self._retire(worker)
        else:
            self._idle[worker] = None


def _not_started(n: int, started: float) -> BatchResult:
    from cogolf.sandbox.session import harness_error

    return harness_error(n, "sandbox child could not be started", started)
