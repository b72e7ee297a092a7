"""Running untrusted programs: the interface in `api`, implementations beside it.

`make_sandbox("fork")` (a fork server) and `make_sandbox("spawn")` (an interpreter
per batch) return the same `Sandbox`; call `await sb.start()` once, then `run_batch`.
"""

from __future__ import annotations

from cogolf.sandbox.api import Sandbox
from cogolf.sandbox.base import WeakSandboxError

MODES = ("fork", "spawn")

__all__ = ["MODES", "Sandbox", "WeakSandboxError", "make_sandbox"]


def make_sandbox(mode: str = "fork", *, accept_weak: bool = False) -> Sandbox:
    """A sandbox in `mode` ("fork": a fork server, "spawn": an interpreter per batch).

    `start()` refuses (WeakSandboxError) when a kernel wall is missing on this
    machine, unless `accept_weak` is set; then it logs a loud warning.
    """
    if mode == "spawn":
        from cogolf.sandbox.spawn import SpawnSandbox

        return SpawnSandbox(accept_weak=accept_weak)
    if mode == "fork":
        from cogolf.sandbox.forkserver import ForkSandbox

        return ForkSandbox(accept_weak=accept_weak)
    raise ValueError(f"unknown sandbox mode {mode!r}: expected one of {', '.join(MODES)}")
