"""Sandbox batches through a queue: a cap on how many run at once, and retries when the
process runs out of descriptors.

Many matches on one server would otherwise start as many sandbox children as their
holes ask for, all at once; past what the machine can run, batches fail instead of
waiting. Here at most `max_batches` run at a time and the rest wait their turn (a
batch's wall clock starts when it runs, not while it waits), so a busy server is
slower, never broken. A batch that could not start (the server had no descriptor
left, EMFILE or ENFILE, or its child could not be made) waits and is started again,
up to `retry_seconds`, rather than ending the match as a harness fault: such a
failure is the server's state of the moment, not anything the program did, and the
program never ran. A sandbox that stays broken still ends the match, that much later.
"""

from __future__ import annotations

import asyncio
import errno
import os
import time
from collections.abc import Sequence
from typing import Any

import structlog

from cogolf.sandbox.api import DEFAULT_LIMITS, BatchResult, Limits, LoadStatus, Sandbox

log = structlog.get_logger("cogolf.sandbox")

# How a batch that never started reads: out of descriptors itself, or a child (or the
# fork server's fork) that could not be made, which is how EMFILE in the parent shows.
_NOT_STARTED = (
    os.strerror(errno.EMFILE),
    os.strerror(errno.ENFILE),
    "EMFILE",
    "ENFILE",
    "could not be started",
    "did not start",
    "could not fork",
)


def default_max_batches() -> int:
    return max(4, 2 * (os.cpu_count() or 1))


def not_started(batch: BatchResult) -> bool:
    """A harness error before the program ran: running the batch again is harmless."""
    return batch.load is LoadStatus.HARNESS_ERROR and any(
        s in batch.load_detail for s in _NOT_STARTED
    )


class QueuedSandbox:
    """A Sandbox in front of another: same interface, same description."""

    def __init__(
        self, inner: Sandbox, *, max_batches: int | None = None, retry_seconds: float = 20.0
    ) -> None:
        self.inner = inner
        self.max_batches = max_batches or default_max_batches()
        self.retry_seconds = retry_seconds
        self._slots = asyncio.Semaphore(self.max_batches)
        self.waiting = 0  # batches queued behind the cap, for logs and tests
        self.retried = 0  # batch starts repeated after running out of descriptors
        # For benchmarks: batches run, seconds they ran and seconds they waited for a slot.
        self.batches = 0
        self.busy_seconds = 0.0
        self.wait_seconds = 0.0

    async def start(self) -> None:
        await self.inner.start()

    async def close(self) -> None:
        await self.inner.close()

    def describe(self) -> dict[str, Any]:
        return self.inner.describe()

    def __getattr__(self, name: str) -> Any:  # e.g. `diagnose`, `walls`, `mode`
        return getattr(self.inner, name)

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
        give_up = time.monotonic() + self.retry_seconds
        pause = 0.05
        while True:
            self.waiting += 1
            queued = time.monotonic()
            try:
                await self._slots.acquire()
            finally:
                self.waiting -= 1
            began = time.monotonic()
            self.wait_seconds += began - queued
            try:
                batch = await self.inner.run_batch(
                    source, calls, function=function, limits=limits, label=label,
                    hash_seed=hash_seed, trusted=trusted,
                )
            finally:
                self._slots.release()
                self.batches += 1
                self.busy_seconds += time.monotonic() - began
            if not not_started(batch) or time.monotonic() + pause > give_up:
                return batch
            self.retried += 1
            log.warning(
                "sandbox_batch_not_started", label=label, detail=batch.load_detail, wait=pause
            )
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)
