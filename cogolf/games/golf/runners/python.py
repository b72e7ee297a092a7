"""The Python course runner: each hole is one batch on the Cogolf fork sandbox.

The sandbox already does what the contract asks: it compiles the file in a fresh
namespace of a freshly forked, walled interpreter, looks up `f` (a def or a
lambda), calls it once per test under a per-call CPU limit and canonicalises
every result (tuples become lists). A hole then costs milliseconds instead of
an interpreter start. Two things are added here so a hole scores as in the
other courses: a test that times out does not cost the tests after it (they run
in a new batch), and the hole as a whole has one wall-clock budget. Where the
fork sandbox cannot start with every wall, the course falls back to one walled
interpreter per hole (`python_process`), as before.
"""

from __future__ import annotations

import importlib.util
import time
from collections.abc import Sequence

import structlog

from cogolf.games.golf.holes import Hole, Test
from cogolf.games.golf.runners.base import DEFAULT_LIMITS, RunLimits
from cogolf.games.golf.runners.python_process import ProcessPythonRunner
from cogolf.games.golf.runners.sandboxed import SandboxThread
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, Limits, LoadStatus

log = structlog.get_logger(__name__)
LOAD_TESTS = 2  # the module body may use the CPU time of this many tests


def source_text(source: bytes) -> str:
    """The text `compile` would read from the file's bytes (BOM, coding line, newlines);
    raises SyntaxError or UnicodeDecodeError as compiling the bytes would."""
    return importlib.util.decode_source(source)


def _rest(n: int, status: CallStatus, detail: str) -> list[CallResult]:
    return [CallResult(status=status, detail=detail) for _ in range(n)]


def _first_timeout(results: Sequence[CallResult]) -> int | None:
    """Index of a timed-out call that ended its batch early, if any."""
    for i, r in enumerate(results):
        if r.status is CallStatus.TIMEOUT:
            return i if i + 1 < len(results) else None
    return None


class PythonRunner:
    language = "python"

    def __init__(self, limits: RunLimits = DEFAULT_LIMITS, *, sandbox_mode: str = "fork") -> None:
        self.limits = limits
        self.process = ProcessPythonRunner(limits)
        self.sandbox = SandboxThread(sandbox_mode)
        self.fallback = False  # True once the fork sandbox was found unusable

    async def start(self) -> None:
        """Start the sandbox now rather than on the first hole."""
        await self._usable()

    def close(self) -> None:
        self.sandbox.close()

    async def _usable(self) -> bool:
        if self.fallback:
            return False
        try:
            await self.sandbox.ready()
        except Exception as exc:  # WeakSandboxError, or a sandbox that cannot start at all
            if not self.fallback:
                log.warning("golf.python_sandbox_unavailable", error=str(exc)[:300],
                            fallback="one walled interpreter per hole")
            self.fallback = True
            return False
        return True

    def _call_limits(self, wall_seconds: float) -> Limits:
        per_test = self.limits.per_test_seconds
        return Limits(
            cpu_seconds_per_call=per_test,
            load_cpu_seconds=LOAD_TESTS * per_test,
            wall_seconds_per_batch=wall_seconds,
            memory_bytes=self.limits.memory_bytes,
            max_result_bytes=self.limits.max_output_bytes,
        )

    async def run(self, source: bytes, hole: Hole, tests: Sequence[Test]) -> BatchResult:
        if not await self._usable():
            return await self.process.run(source, hole, tests)
        started = time.monotonic()
        try:
            text = source_text(source)
        except (SyntaxError, UnicodeDecodeError) as exc:
            return BatchResult(load=LoadStatus.SYNTAX_ERROR, load_detail=str(exc)[:300],
                               results=_rest(len(tests), CallStatus.NOT_RUN, ""))
        calls = [list(t.args) for t in tests]
        deadline = started + self.limits.per_hole_seconds
        results: list[CallResult] = []
        while len(results) < len(calls):
            remaining = deadline - time.monotonic()
            if remaining <= 0:
                results += _rest(len(calls) - len(results), CallStatus.TIMEOUT,
                                 "the hole ran out of wall time")
                break
            batch = await self.sandbox.run_batch(
                text, calls[len(results):], function="f", limits=self._call_limits(remaining),
                label=f"golf:{hole.key}",
            )
            if batch.load is LoadStatus.HARNESS_ERROR:
                # the sandbox's own failure, never the program's: this hole runs the old way
                log.error("golf.python_sandbox_failed", hole=hole.key, detail=batch.load_detail)
                return await self.process.run(source, hole, tests)
            if batch.load is not LoadStatus.OK:
                if not results:
                    return batch
                # a rerun after a timeout that no longer loads (a load that depends on luck)
                results += _rest(len(calls) - len(results), CallStatus.CRASH,
                                 f"reloading after a timeout failed: {batch.load.value}")
                break
            cut = _first_timeout(batch.results)
            if cut is None:
                results += batch.results
                break
            results += batch.results[: cut + 1]
        return BatchResult(load=LoadStatus.OK, results=results,
                           wall_seconds=time.monotonic() - started)
