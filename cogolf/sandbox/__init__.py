"""Running untrusted programs: the interface in `api`, implementations beside it.

`make_sandbox("fork")` (a fork server) and `make_sandbox("spawn")` (an interpreter
per batch) return the same `Sandbox`; call `await sb.start()` once, then `run_batch`.
"""

from __future__ import annotations

from collections.abc import Sequence

from cogolf.sandbox.api import Sandbox
from cogolf.sandbox.base import WeakSandboxError

MODES = ("fork", "spawn")

__all__ = ["MODES", "Sandbox", "WeakSandboxError", "make_sandbox"]


def make_sandbox(
    mode: str = "fork", *, accept_weak: bool = False, hash_seeds: Sequence[int] | None = None
) -> Sandbox:
    """A sandbox in `mode` ("fork": a fork server, "spawn": an interpreter per batch).

    `start()` refuses (WeakSandboxError) when a kernel wall is missing on this
    machine, unless `accept_weak` is set; then it logs a loud warning. A fork
    sandbox starts a fork server for each of `hash_seeds` at once (default: every
    hash seed matches use); one for a single match needs only that match's.
    """
    if mode == "spawn":
        from cogolf.sandbox.spawn import SpawnSandbox

        return SpawnSandbox(accept_weak=accept_weak)
    if mode == "fork":
        from cogolf.sandbox.forkserver import ForkSandbox

        return ForkSandbox(accept_weak=accept_weak, prestart=hash_seeds)
    raise ValueError(f"unknown sandbox mode {mode!r}: expected one of {', '.join(MODES)}")
