"""Sandbox batches through a queue: a cap on how many run at once, and retries when the
process runs out of descriptors.

Many matches on one server would otherwise start as many sandbox children as their
holes ask for, all at once; past what the machine can run, batches fail instead of
waiting. Here at most `max_batches` run at a time and the rest wait their turn (a
batch's wall clock starts when it runs, not while it waits), so a busy server is
slower, never broken. A batch that could not start because the server had no
descriptor left (EMFILE, ENFILE) waits and is started again, up to `retry_seconds`,
rather than ending the match as a harness fault: such a failure is the server's
state of the moment, not anything the program did.
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

_NO_DESCRIPTORS = (os.strerror(errno.EMFILE), os.strerror(errno.ENFILE), "EMFILE", "ENFILE")


def default_max_batches() -> int:
    return max(4, 2 * (os.cpu_count() or 1))


def out_of_descriptors(batch: BatchResult) -> bool:
    return batch.load is LoadStatus.HARNESS_ERROR and any(
        s in batch.load_detail for s in _NO_DESCRIPTORS
    )


class QueuedSandbox:
    """A Sandbox in front of another: same interface, same description."""

    def __init__(
        self, inner: Sandbox, *, max_batches: int | None = None, retry_seconds: float = 30.0
    ) -> None:
        self.inner = inner
        self.max_batches = max_batches or default_max_batches()
        self.retry_seconds = retry_seconds
        self._slots = asyncio.Semaphore(self.max_batches)
        self.waiting = 0  # batches queued behind the cap, for logs and tests
        self.retried = 0  # batch starts repeated after running out of descriptors

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
    ) -> BatchResult:
        give_up = time.monotonic() + self.retry_seconds
        pause = 0.05
        while True:
            self.waiting += 1
            try:
                await self._slots.acquire()
            finally:
                self.waiting -= 1
            try:
                batch = await self.inner.run_batch(
                    source, calls, function=function, limits=limits, label=label
                )
            finally:
                self._slots.release()
            if not out_of_descriptors(batch) or time.monotonic() + pause > give_up:
                return batch
            self.retried += 1
            log.warning("sandbox_no_descriptors_retry", label=label, wait=pause)
            await asyncio.sleep(pause)
            pause = min(1.0, pause * 2)
