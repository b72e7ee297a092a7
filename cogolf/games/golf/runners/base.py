"""What every golf runner shares: limits, scratch directories and the walled call."""

from __future__ import annotations

import asyncio
import math
import shutil
import tempfile
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import Protocol

import structlog

from cogolf.games.golf.holes import Hole, Test
from cogolf.games.golf.runners import protocol
from cogolf.games.golf.runners.paced import PacedRun, run_paced
from cogolf.games.golf.runners.walled import ExternalRun, WallSpec, run_external
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus

log = structlog.get_logger(__name__)
START_RETRIES = 6


@dataclass(frozen=True)
class RunLimits:
    """Limits for one hole's process; every number is stated in the prompt."""

    per_test_seconds: float = 1.0
    per_hole_seconds: float = 10.0  # wall time of the whole run, all tests together
    compile_seconds: float = 30.0  # Rust only
    memory_bytes: int = 1024 * 1024 * 1024
    compile_memory_bytes: int = 4 * 1024 * 1024 * 1024
    max_output_bytes: int = 1024 * 1024


DEFAULT_LIMITS = RunLimits()


class Runner(Protocol):
    language: str

    async def start(self) -> None:
        """Get long-lived parts ready (a sandbox server); `run` does it when still needed."""
        ...

    def close(self) -> None:
        """Stop what `start` started; a closed runner starts again on its next `run`."""
        ...

    async def run(self, source: bytes, hole: Hole, tests: Sequence[Test]) -> BatchResult:
        """Load `source` once and call f for every test; never raises for what the program does."""
        ...


class Scratch:
    """A fresh directory per run, removed afterwards whatever happened."""

    def __init__(self) -> None:
        self.path = Path(tempfile.mkdtemp(prefix="cogolf-golf-"))
        self.path.chmod(0o755)

    def write(self, files: Mapping[str, bytes]) -> None:
        for name, data in files.items():
            target = self.path / name
            target.write_bytes(data)
            target.chmod(0o644)

    def __enter__(self) -> Scratch:
        return self

    def __exit__(self, *exc: object) -> None:
        shutil.rmtree(self.path, ignore_errors=True)


def spec_for(
    scratch: Path,
    *,
    readable: Sequence[str] = (),
    executable: Sequence[str] = (),
    max_processes: int,
    memory_bytes: int,
    cpu_seconds: float,
) -> WallSpec:
    """`max_processes` counts tasks beyond the first (threads included)."""
    return WallSpec(
        readable=tuple(readable),
        writable=(str(scratch),),
        executable=tuple(executable),
        max_processes=max_processes,
        memory_bytes=memory_bytes,
        cpu_seconds=math.ceil(cpu_seconds) + 1,  # per-process backstop; the run's cap is exact
        network=False,
    )


def _env(scratch: Path) -> dict[str, str]:
    return {
        "PATH": "/usr/local/bin:/usr/bin:/bin",
        "HOME": str(scratch),
        "TMPDIR": str(scratch),
        "LANG": "C.UTF-8",
    }


def _busy_uid(run: ExternalRun) -> bool:
    # A uid whose previous holder is still exiting makes execve fail with EAGAIN
    # under RLIMIT_NPROC; that is the machine's state, not the program's fault.
    return run.reason == "start_failed" and b"Errno 11" in run.stderr


async def walled(
    argv: Sequence[str], stdin: bytes, scratch: Path, spec: WallSpec, *, cpu_seconds: float,
    wall_seconds: float, max_output_bytes: int,
) -> ExternalRun:
    env = _env(scratch)
    for attempt in range(START_RETRIES + 1):
        run = await run_external(
            list(argv),
            stdin=stdin,
            cwd=str(scratch),
            spec=spec,
            cpu_seconds=cpu_seconds,
            wall_seconds=wall_seconds,
            max_output_bytes=max_output_bytes,
            env=env,
        )
        if not _busy_uid(run) or attempt == START_RETRIES:
            return run
        log.info("golf.start_retry", argv0=argv[0], attempt=attempt + 1)
        await asyncio.sleep(min(1.0, 0.1 * 2**attempt))
    raise AssertionError("unreachable")


async def paced(
    argv: Sequence[str], header: bytes, calls: Sequence[bytes], token: str, scratch: Path,
    spec: WallSpec, limits: RunLimits,
) -> PacedRun:
    """`walled` for a child that takes its tests one at a time (see `paced`)."""
    for attempt in range(START_RETRIES + 1):
        done = await run_paced(
            argv, header, calls, token, cwd=str(scratch), spec=spec, env=_env(scratch),
            per_test_seconds=limits.per_test_seconds, cpu_seconds=limits.per_hole_seconds,
            wall_seconds=limits.per_hole_seconds, max_output_bytes=limits.max_output_bytes,
        )
        if not _busy_uid(done.run) or attempt == START_RETRIES:
            return done
        log.info("golf.start_retry", argv0=argv[0], attempt=attempt + 1)
        await asyncio.sleep(min(1.0, 0.1 * 2**attempt))
    raise AssertionError("unreachable")


def paced_batch(done: PacedRun, token: str, n_calls: int, wall: float) -> BatchResult:
    """The batch of a paced run: a test the parent killed timed out, the ones after it
    never ran."""
    batch = to_batch(done.run, token, n_calls, wall)
    if done.killed_at is None or batch.load is not LoadStatus.OK:
        return batch
    return cut_at(batch, done.killed_at, "over the per-test CPU time (measured by the scorer)")


def cut_at(batch: BatchResult, first: int, detail: str) -> BatchResult:
    results = list(batch.results)
    results[first] = CallResult(status=CallStatus.TIMEOUT, detail=detail)
    for i in range(first + 1, len(results)):
        results[i] = CallResult(status=CallStatus.NOT_RUN, detail="an earlier test timed out")
    return BatchResult(load=batch.load, results=results, wall_seconds=batch.wall_seconds)


def end_detail(run: ExternalRun) -> str:
    if run.timed_out:
        return f"the hole ran out of {'CPU' if run.reason == 'cpu' else 'wall'} time"
    if run.reason == "memory":
        return "the process ran out of memory"
    if run.reason == "start_failed":
        return "could not start: " + run.stderr.decode("utf-8", errors="replace")[:300]
    if run.returncode is not None and run.returncode < 0:
        return f"the process was killed by signal {-run.returncode}"
    return f"the process ended (exit code {run.returncode}) before reporting"


def to_batch(run: ExternalRun, token: str, n_calls: int, wall: float = 0.0) -> BatchResult:
    return protocol.parse_output(
        run.stdout, token, n_calls, ended_by_timeout=run.timed_out, end_detail=end_detail(run),
        wall_seconds=wall,
    )
