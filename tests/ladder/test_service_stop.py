"""A ladder server stops when told, even when told at the moment its loop is woken.

On Python 3.11 `asyncio.wait_for` returns the awaited result and drops a
cancellation that arrives just after the awaited future is done: a loop waiting
that way for its wake-up event could not be stopped, and `cogolf serve` (or `bench
ladder`) hung at exit. Every gap between the wake-up and the stop is tried.
"""

from __future__ import annotations

import asyncio
from pathlib import Path

from cogolf.ladder.service import open_ladder


def test_stop_ends_the_loop_whenever_it_is_woken(tmp_path: Path) -> None:
    ladder = open_ladder(tmp_path, None, poll=5.0)

    async def go() -> None:
        for gap in range(8):
            ladder._task = asyncio.create_task(ladder._loop())
            # until the loop waits for a wake-up (its first tick is a heartbeat)
            for _ in range(2000):
                if ladder._wake._waiters:  # type: ignore[attr-defined]
                    break
                await asyncio.sleep(0.005)
            assert ladder._wake._waiters, "the loop never waited"  # type: ignore[attr-defined]
            ladder.wake()
            for _ in range(gap):
                await asyncio.sleep(0)
            ladder._task.cancel()  # what stop() does first
            done, _ = await asyncio.wait([ladder._task], timeout=3.0)
            assert done, f"the loop went on after a stop {gap} steps after its wake-up"
        await asyncio.wait_for(ladder.stop(), 10.0)

    try:
        asyncio.run(go())
    finally:
        ladder.store.engine.dispose()
