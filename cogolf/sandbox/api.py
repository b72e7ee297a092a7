"""The one interface between the game and the sandbox.

The engine and the driver only ever see these types: give a program's source and
a batch of argument lists, get back one result per call. How the program is run
(a fresh process per batch, a fork server, which kernel walls) is behind it.
Only argument values go in; expected values never do — the caller compares.
"""

from __future__ import annotations

from collections.abc import Sequence
from typing import Any, Protocol

import msgspec

from cogolf.engine.results import BatchResult, CallResult, CallStatus, LoadStatus

__all__ = [
    "DEFAULT_LIMITS",
    "BatchResult",
    "CallResult",
    "CallStatus",
    "Limits",
    "LoadStatus",
    "Sandbox",
]


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    cpu_seconds_per_call: float = 1.0
    load_cpu_seconds: float = 2.0
    wall_seconds_per_batch: float = 6.0
    memory_bytes: int = 256 * 1024 * 1024
    max_result_bytes: int = 1024 * 1024  # all result lines of one batch together
    max_result_line_bytes: int = 256 * 1024


DEFAULT_LIMITS = Limits()


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
    ) -> BatchResult:
        """Load `source`, then call `function(*args)` for each args list, in order.

        Returns exactly len(calls) results. `label` names the program in logs only.
        """
        ...

    def describe(self) -> dict[str, Any]:
        """Mode and which walls are in force, for `cogolf doctor` and replay headers."""
        ...
