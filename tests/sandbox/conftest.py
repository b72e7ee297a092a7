"""Real sandboxes for the tests: one per mode per test worker, on a loop of its own.

The sandbox lives on an event loop in a background thread so that it is started
once per worker and every test can submit batches to it synchronously.
"""

from __future__ import annotations

import asyncio
import os
import threading
from collections.abc import Coroutine, Iterator, Sequence
from typing import Any, TypeVar

import pytest

from cogolf.sandbox import MODES, make_sandbox
from cogolf.sandbox.api import BatchResult, Limits, Sandbox

T = TypeVar("T")


class LoopThread:
    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()

    def run(self, coro: Coroutine[Any, Any, T], timeout: float = 60.0) -> T:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(timeout)

    def stop(self) -> None:
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(5)


class Runner:
    """A started sandbox plus a synchronous `batch` for tests."""

    def __init__(self, loop: LoopThread, sandbox: Sandbox, mode: str) -> None:
        self.loop = loop
        self.sandbox = sandbox
        self.mode = mode

    def batch(self, source: str, calls: Sequence[list[Any]] = ([],), *,
              limits: Limits | None = None, function: str = "solve") -> BatchResult:
        kwargs: dict[str, Any] = {"function": function}
        if limits is not None:
            kwargs["limits"] = limits
        return self.loop.run(self.sandbox.run_batch(source, list(calls), **kwargs))

    def gather(self, *jobs: tuple[str, Sequence[list[Any]]],
               limits: Limits | None = None) -> list[BatchResult]:
        kwargs: dict[str, Any] = {} if limits is None else {"limits": limits}

        async def all_of() -> list[BatchResult]:
            return list(await asyncio.gather(
                *(self.sandbox.run_batch(src, list(calls), **kwargs) for src, calls in jobs)))
        return self.loop.run(all_of())


@pytest.fixture(scope="session")
def loop_thread() -> Iterator[LoopThread]:
    lt = LoopThread()
    yield lt
    lt.stop()


_RUNNERS: dict[str, Runner] = {}


@pytest.fixture(scope="session", params=MODES)
def runner(request: pytest.FixtureRequest, loop_thread: LoopThread) -> Iterator[Runner]:
    mode = request.param
    sb = make_sandbox(mode)
    loop_thread.run(sb.start())
    r = Runner(loop_thread, sb, mode)
    yield r
    loop_thread.run(sb.close())


@pytest.fixture(scope="session")
def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("the kernel walls need root on this machine")
