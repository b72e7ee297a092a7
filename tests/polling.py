"""Waiting for a state, not for a time: a test that sleeps "long enough" is slow on a
quiet machine and flaky on a loaded one; polling ends as soon as the state holds and
fails, naming it, when it never does within its bound."""

from __future__ import annotations

import asyncio
import inspect
import time
from collections.abc import Awaitable, Callable


async def until(
    check: Callable[[], bool | Awaitable[bool]], what: str, timeout: float = 30.0,
    poll: float = 0.02,
) -> None:
    """Return once `check()` (sync or async) is true; fail after `timeout` seconds."""
    give_up = time.monotonic() + timeout
    while True:
        held = check()
        if inspect.isawaitable(held):
            held = await held
        if held:
            return
        if time.monotonic() >= give_up:
            raise AssertionError(f"not within {timeout} s: {what}")
        await asyncio.sleep(poll)
