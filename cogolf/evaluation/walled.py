"""Running an evaluator (pytest, a project's test command) on untrusted code.

Both solo games run a candidate's code through its own test suite. This is the
one place that starts that process: under the sandbox's walls (a leased
unprivileged uid, no network, rlimits, filesystem rules) when
`cogolf.sandbox.walls` is available, and otherwise as a plain child process with
only CPU/memory rlimits, a wall-clock limit and an output cap — recorded as
`walled: false` in the result so such a score is never mistaken for a walled one.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import resource
import signal
import time
from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

DEFAULT_MEMORY_BYTES = 2 * 1024 * 1024 * 1024
DEFAULT_MAX_OUTPUT_BYTES = 4 * 1024 * 1024
DEFAULT_MAX_PROCESSES = 64


_REASONS = {
    "exit": "",
    "cpu": "CPU time limit reached",
    "wall": "wall-clock limit reached",
    "memory": "memory limit reached",
}


def _reason(reason: str, stderr: bytes) -> str:
    if reason == "start_failed":
        return "could not start under the walls: " + stderr.decode("utf-8", "replace")[-300:]
    return _REASONS.get(reason, reason)


@dataclass(frozen=True)
class Walls:
    """What the evaluator may touch. Paths not listed are off limits under walls."""

    readable: tuple[Path, ...] = ()
    writable: tuple[Path, ...] = ()  # handed to the run's uid for the run
    executable: tuple[Path, ...] = ()
    drop_uid: bool = True  # False only for trusted tools on a root-private interpreter
    memory_bytes: int = DEFAULT_MEMORY_BYTES
    max_processes: int = DEFAULT_MAX_PROCESSES
    env: tuple[tuple[str, str], ...] = ()  # added to the minimal environment
    pass_fds: tuple[int, ...] = ()  # inherited descriptors (the results channel)
    stdin: bytes = b""
    unix_listen: bool = False  # a browser's single-instance lock; see WallSpec.unix_listen
    loopback: bool = False  # TCP/UDP in a network namespace of its own; see WallSpec.loopback
    terminals: bool = False  # pseudo-terminals it makes; see WallSpec.terminals


@dataclass(frozen=True)
class EvaluatorRun:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    cpu_seconds: float
    wall_seconds: float
    walled: bool
    reason: str = ""  # why the process was stopped or could not start, if it was
    uid_dropped: bool = False


def walls_available() -> bool:
    try:
        from cogolf.sandbox import walls  # noqa: F401
    except ImportError:
        return False
    return True


def run_environment(cwd: Path, walls: Walls) -> dict[str, str]:
    """A minimal environment; temporary files go to the first writable directory,
    since the system temporary directory is outside the walls."""
    env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": str(cwd), "LANG": "C.UTF-8"}
    if walls.writable:
        env["TMPDIR"] = str(walls.writable[-1])
    env.update(walls.env)
    return env


async def run_evaluator(
    argv: Sequence[str],
    *,
    cwd: Path,
    walls: Walls,
    wall_seconds: float,
    cpu_seconds: float | None = None,
    max_output_bytes: int = DEFAULT_MAX_OUTPUT_BYTES,
) -> EvaluatorRun:
    cpu = cpu_seconds if cpu_seconds is not None else wall_seconds
    start = time.monotonic()
    if walls_available():
        return await _run_walled(argv, cwd, walls, wall_seconds, cpu, max_output_bytes, start)
    log.warning("evaluator_unwalled", reason="cogolf.sandbox.walls is not available")
    return await _run_plain(argv, cwd, walls, wall_seconds, cpu, max_output_bytes, start)


async def _run_walled(
    argv: Sequence[str],
    cwd: Path,
    walls: Walls,
    wall_seconds: float,
    cpu: float,
    max_output_bytes: int,
    start: float,
) -> EvaluatorRun:
    from cogolf.sandbox import walls as sandbox_walls

    spec = sandbox_walls.WallSpec(
        readable=tuple(str(p) for p in walls.readable),
        writable=tuple(str(p) for p in walls.writable),
        executable=tuple(str(p) for p in walls.executable),
        max_processes=walls.max_processes,
        memory_bytes=walls.memory_bytes,
        cpu_seconds=max(1, math.ceil(cpu)) + 1,  # backstop; run_external caps the whole tree
        network=False,
        drop_uid=walls.drop_uid,
        unix_listen=walls.unix_listen,
        loopback=walls.loopback,
        terminals=walls.terminals,
    )
    run = await sandbox_walls.run_external(
        list(argv),
        stdin=walls.stdin,
        cwd=str(cwd),
        spec=spec,
        cpu_seconds=cpu,
        wall_seconds=wall_seconds,
        max_output_bytes=max_output_bytes,
        env=run_environment(cwd, walls),
        pass_fds=walls.pass_fds,
    )
    return EvaluatorRun(
        returncode=run.returncode,
        stdout=run.stdout,
        stderr=run.stderr,
        timed_out=run.timed_out,
        cpu_seconds=run.cpu_seconds,
        wall_seconds=time.monotonic() - start,
        walled=True,
        reason=_reason(run.reason, run.stderr),
        uid_dropped=walls.drop_uid and os.geteuid() == 0,
    )


async def _run_plain(
    argv: Sequence[str],
    cwd: Path,
    walls: Walls,
    wall_seconds: float,
    cpu: float,
    max_output_bytes: int,
    start: float,
) -> EvaluatorRun:
    def limit() -> None:  # runs in the child between fork and exec
        soft = max(1, int(cpu + 0.999))
        resource.setrlimit(resource.RLIMIT_CPU, (soft, soft + 1))
        resource.setrlimit(resource.RLIMIT_AS, (walls.memory_bytes, walls.memory_bytes))
        resource.setrlimit(resource.RLIMIT_CORE, (0, 0))

    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    try:
        proc = await asyncio.create_subprocess_exec(
            *argv,
            cwd=str(cwd),
            stdin=asyncio.subprocess.PIPE if walls.stdin else asyncio.subprocess.DEVNULL,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            env=run_environment(cwd, walls),
            start_new_session=True,  # one process group, so a timeout kills every child
            preexec_fn=limit,
            pass_fds=walls.pass_fds,
        )
    except OSError as exc:
        return EvaluatorRun(None, b"", b"", False, 0.0, time.monotonic() - start, False, str(exc))
    assert proc.stdout is not None and proc.stderr is not None
    if proc.stdin is not None:
        with contextlib.suppress(OSError, ConnectionError):
            proc.stdin.write(walls.stdin)
            await proc.stdin.drain()
            proc.stdin.close()
    out_task = asyncio.ensure_future(_read_capped(proc.stdout, max_output_bytes))
    err_task = asyncio.ensure_future(_read_capped(proc.stderr, max_output_bytes))
    timed_out = False
    try:
        await asyncio.wait_for(proc.wait(), timeout=wall_seconds)
    except TimeoutError:
        timed_out = True
        _kill_group(proc.pid)
        await proc.wait()
    stdout, stderr = await out_task, await err_task
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    used = (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)
    reason = f"wall-clock limit of {wall_seconds:g}s reached" if timed_out else ""
    if proc.returncode is not None and proc.returncode == -signal.SIGXCPU:
        timed_out, reason = True, f"CPU limit of {cpu:g}s reached"
    return EvaluatorRun(
        proc.returncode, stdout, stderr, timed_out, used, time.monotonic() - start, False, reason
    )


async def _read_capped(stream: asyncio.StreamReader, cap: int) -> bytes:
    """Keep the first `cap` bytes, drain (and drop) the rest so the child never blocks."""
    kept = bytearray()
    while chunk := await stream.read(65536):
        if len(kept) < cap:
            kept.extend(chunk[: cap - len(kept)])
    return bytes(kept)


def _kill_group(pid: int) -> None:
    with contextlib.suppress(ProcessLookupError):
        os.killpg(pid, signal.SIGKILL)
