"""A started Cogolf sandbox on an event loop of its own, usable from any loop.

The fork sandbox belongs to the loop it was started on, while a golf runner is
called from whatever loop its caller has (a command's `asyncio.run`, a live
server, one loop per test). So one background thread runs a loop that owns the
sandbox; batches are handed over to it and awaited from the caller's loop. The
thread and the sandbox are closed by `close()`, or at interpreter exit.
"""

from __future__ import annotations

import asyncio
import concurrent.futures
import threading
import weakref
from collections.abc import Sequence
from typing import Any

import structlog

from cogolf.sandbox import make_sandbox
from cogolf.sandbox.api import BatchResult, Limits, Sandbox

log = structlog.get_logger(__name__)
CLOSE_SECONDS = 10.0


def _shutdown(loop: asyncio.AbstractEventLoop, thread: threading.Thread, sandbox: Sandbox,
              started: concurrent.futures.Future[None]) -> None:
    """Close the sandbox (if it ever started) and stop its loop; runs once.

    At interpreter exit the close may fail (no new threads can start by then); the
    fork server and its children end anyway when this process's end of their
    pipes closes, and only the sandbox's empty work directory is left behind."""
    if started.done() and not started.cancelled() and started.exception() is None:
        try:
            asyncio.run_coroutine_threadsafe(sandbox.close(), loop).result(CLOSE_SECONDS)
        except Exception as exc:
            log.info("golf.sandbox_close_incomplete", error=f"{type(exc).__name__}: {exc}")
    loop.call_soon_threadsafe(loop.stop)
    thread.join(CLOSE_SECONDS)
    if not thread.is_alive():
        loop.close()


class SandboxThread:
    """One sandbox of `mode`, started on first use (or by `start`) in its own thread."""

    def __init__(self, mode: str = "fork", *, accept_weak: bool = False) -> None:
        self.mode = mode
        self.accept_weak = accept_weak
        self._lock = threading.Lock()
        self._loop: asyncio.AbstractEventLoop | None = None
        self._sandbox: Sandbox | None = None
        self._started: concurrent.futures.Future[None] | None = None
        self._finalizer: weakref.finalize | None = None

    def _begin(self) -> concurrent.futures.Future[None]:
        with self._lock:
            if self._started is None:
                loop = asyncio.new_event_loop()
                thread = threading.Thread(target=loop.run_forever, name="golf-sandbox",
                                          daemon=True)
                thread.start()
                sandbox = make_sandbox(self.mode, accept_weak=self.accept_weak)
                started = asyncio.run_coroutine_threadsafe(sandbox.start(), loop)
                self._loop, self._sandbox, self._started = loop, sandbox, started
                self._finalizer = weakref.finalize(self, _shutdown, loop, thread, sandbox,
                                                   started)
            return self._started

    async def ready(self) -> None:
        """Wait until the sandbox runs; raises what its start raised (e.g. WeakSandboxError)."""
        await asyncio.wrap_future(self._begin())

    async def run_batch(self, source: str, calls: Sequence[list[Any]], *, function: str,
                        limits: Limits, label: str = "") -> BatchResult:
        await self.ready()
        assert self._sandbox is not None and self._loop is not None
        batch = self._sandbox.run_batch(source, calls, function=function, limits=limits,
                                        label=label)
        return await asyncio.wrap_future(asyncio.run_coroutine_threadsafe(batch, self._loop))

    def describe(self) -> dict[str, Any]:
        return self._sandbox.describe() if self._sandbox is not None else {"mode": self.mode}

    def close(self) -> None:
        """Close the sandbox and stop the thread; a closed SandboxThread starts afresh."""
        with self._lock:
            finalizer, self._finalizer = self._finalizer, None
            self._loop = self._sandbox = self._started = None
        if finalizer is not None:
            finalizer()
