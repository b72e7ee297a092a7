"""The one interface between the game and the sandbox.

The engine and the driver only ever see these types: give a program's source and
a batch of argument lists, get back one result per call. How the program is run
(a fresh process per batch, a fork server, which kernel walls) is behind it.
Only argument values go in; expected values never do — the caller compares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

from cogolf.engine.results import (
    DEFAULT_LIMITS,
    MATCH_HASH_SEEDS,
    BatchResult,
    CallResult,
    CallStatus,
    Limits,
    LoadStatus,
)

__all__ = [
    "DEFAULT_LIMITS",
    "MATCH_HASH_SEEDS",
    "BatchResult",
    "CallResult",
    "CallStatus",
    "Limits",
    "LoadStatus",
    "Sandbox",
]


class Sandbox(Protocol):
    """Runs untrusted programs. Implementations must never raise from `run_batch`
    because of what a program does: every misbehaviour becomes a result."""

    async def start(self) -> None: ...

    async def close(self) -> None: ...

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
        """Load `source`, then call `function(*args)` for each args list, in order.

        Returns exactly len(calls) results. `label` names the program in logs only.
        `hash_seed` (0 to 2**32 - 1) fixes string hashing, as PYTHONHASHSEED does;
        None leaves it to the sandbox. After a call that ends the batch (a timeout, a
        crash), the remaining calls are `NOT_RUN`. `trusted` says `source` is our own
        pure code (a hole's reference): it may answer from a walled worker that serves
        several batches of it (`sandbox.workers`), never with anything a fresh child
        would not answer.
        """
        ...

    def describe(self) -> dict[str, Any]:
        """Mode and which walls are in force, for `cogolf doctor` and replay headers."""
        ...
