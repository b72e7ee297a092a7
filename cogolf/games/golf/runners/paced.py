"""One walled process per hole, fed one test at a time, its CPU time kept by the parent.

A timer inside the child (setitimer, a thread with a deadline) is the program's
to switch off: a Rust `f` that cancelled its SIGPROF timer ran a 2.5 s loop
unpunished. So the parent hands the child the next test's arguments only after
the previous test's report arrived, reads the run's CPU time from the kernel
(the cgroup's accounting, else /proc) when it sends them, and kills the process
when that test alone has used more than its limit. Nothing inside the child can
extend the time, and it never holds a test it is not running: a private test's
arguments exist only in the child's memory while that test runs.

The child's own timer stays as the fast path (an honest slow test times out
exactly at its limit and the process goes on); the parent's check is the one
that cannot be lifted, a little later (`SLACK_SECONDS`). A kill by the parent
costs the tests after it (they are not run).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass

import msgspec

from cogolf.games.golf.runners.walled import ExternalRun, WallSpec
from cogolf.sandbox.walls import WalledProcess, WallStartError, start_failed, walled_process

SLACK_SECONDS = 0.25  # past the per-test limit before the parent kills (the child's timer first)
POLL_SECONDS = 0.01
MAX_LINE_BYTES = 1 << 20


@dataclass(frozen=True)
class PacedRun:
    run: ExternalRun  # stdout holds only the accepted report lines
    killed_at: int | None  # the test the parent killed for its CPU time, if any


class _Reports:
    """Report lines as they arrive: the load line, then one line per test sent."""

    def __init__(self, token: str, cap: int) -> None:
        self.prefix = token.encode() + b" "
        self.cap = cap
        self.pending = b""
        self.kept: list[bytes] = []
        self.size = 0
        self.loaded: str | None = None
        self.waiting_for: int | None = None
        self.reported: set[int] = set()
        self.changed = asyncio.Event()

    def feed(self, chunk: bytes) -> None:
        self.pending += chunk
        *lines, self.pending = self.pending.split(b"\n")
        if len(self.pending) > MAX_LINE_BYTES:
            self.pending = b""  # a line that never ends is not a report
        for line in lines:
            if line.startswith(self.prefix):
                self._line(line)

    def _line(self, line: bytes) -> None:
        try:
            obj = msgspec.json.decode(line[len(self.prefix) :])
        except (msgspec.DecodeError, RecursionError):
            return
        if not isinstance(obj, dict):
            return
        if self.loaded is None and isinstance(obj.get("load"), str):
            self.loaded = obj["load"]
        elif (i := self.waiting_for) is not None and obj.get("i") == i and i not in self.reported:
            self.reported.add(i)
        else:
            return  # a report for a test not being run is not a report
        if self.size + len(line) <= self.cap:
            self.kept.append(line)
            self.size += len(line) + 1
        self.changed.set()


async def run_paced(
    argv: Sequence[str],
    header: bytes,
    calls: Sequence[bytes],
    token: str,
    *,
    cwd: str,
    spec: WallSpec,
    env: Mapping[str, str],
    per_test_seconds: float,
    cpu_seconds: float,
    wall_seconds: float,
    max_output_bytes: int,
) -> PacedRun:
    """Run `argv` under `spec`: write `header`, wait for the load report, then write
    each of `calls` once the previous one reported. `cpu_seconds` and `wall_seconds`
    bound the whole run, `per_test_seconds` (+ slack) each test."""
    started = time.monotonic()
    try:
        async with walled_process(argv, cwd=cwd, spec=spec, env=env) as walled:
            return await _pace(
                walled,
                header,
                calls,
                token,
                started,
                per_test_seconds,
                cpu_seconds,
                wall_seconds,
                max_output_bytes,
            )
    except WallStartError as exc:
        return PacedRun(start_failed(str(exc), started), None)


async def _pace(
    walled: WalledProcess,
    header: bytes,
    calls: Sequence[bytes],
    token: str,
    started: float,
    per_test_seconds: float,
    cpu_seconds: float,
    wall_seconds: float,
    max_output_bytes: int,
) -> PacedRun:
    proc = walled.proc
    cpu_used = walled.cpu_used
    reports = _Reports(token, max_output_bytes)
    assert proc.stdout is not None and proc.stderr is not None and proc.stdin is not None

    async def read_out() -> None:
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(1 << 16):
            reports.feed(chunk)
        reports.changed.set()

    async def read_err() -> tuple[bytes, bool]:
        assert proc.stderr is not None
        kept, truncated = bytearray(), False
        while chunk := await proc.stderr.read(1 << 16):
            room = max_output_bytes - len(kept)
            truncated = truncated or len(chunk) > room
            kept += chunk[: max(room, 0)]
        return bytes(kept), truncated

    out_task = asyncio.ensure_future(read_out())
    err_task = asyncio.ensure_future(read_err())
    wait_task = asyncio.ensure_future(proc.wait())
    deadline = started + wall_seconds

    async def send(data: bytes) -> bool:
        """False when the child is gone or has not taken the bytes by the deadline."""
        try:
            proc.stdin.write(data)  # type: ignore[union-attr]
            await asyncio.wait_for(
                proc.stdin.drain(),  # type: ignore[union-attr]
                max(0.0, deadline - time.monotonic()),
            )
        except (OSError, ConnectionError, TimeoutError):
            return False
        return True

    async def until(done: object, test_cpu_base: float | None) -> str | None:
        """Wait until `done()` or the process ends; the reason a limit was hit, if one."""
        while not done() and not wait_task.done():  # type: ignore[operator]
            reports.changed.clear()
            # not asyncio.wait_for, which on 3.11 can drop a cancellation (the match's end)
            with contextlib.suppress(TimeoutError):
                async with asyncio.timeout(POLL_SECONDS):
                    await reports.changed.wait()
            used = cpu_used()
            if test_cpu_base is not None and used - test_cpu_base > (
                per_test_seconds + SLACK_SECONDS
            ):
                return "test_cpu"
            if used > cpu_seconds:
                return "cpu"
            if time.monotonic() > deadline:
                return "wall"
        return None

    reason = "exit"
    killed_at: int | None = None
    if await send(header):
        hit = await until(lambda: reports.loaded is not None, None)
        if hit is None and reports.loaded == "ok":
            for i, call in enumerate(calls):
                reports.waiting_for = i
                base = cpu_used()
                if not await send(call):
                    break
                hit = await until(lambda i=i: i in reports.reported, base)
                if hit is not None or i not in reports.reported:
                    break
        if hit == "test_cpu":
            reason, killed_at = "cpu", reports.waiting_for
        elif hit is not None:
            reason = hit
        with contextlib.suppress(OSError, ConnectionError):
            proc.stdin.close()
        if hit is None:
            hit = await until(lambda: False, None)  # let it exit after its last test
            reason = hit or reason

    await walled.end(wait_task)
    try:
        await asyncio.wait_for(out_task, timeout=2.0)
        stderr, err_trunc = await asyncio.wait_for(err_task, timeout=2.0)
    except TimeoutError:
        out_task.cancel()
        err_task.cancel()
        stderr, err_trunc = b"", True
    if reason == "exit" and walled.died_of_memory():
        reason = "memory"
    run = ExternalRun(
        returncode=proc.returncode,
        stdout=b"\n".join(reports.kept) + b"\n",
        stderr=stderr,
        timed_out=reason in ("cpu", "wall"),
        cpu_seconds=cpu_used(),
        reason=reason,
        wall_seconds=time.monotonic() - started,
        stderr_truncated=err_trunc,
    )
    return PacedRun(run, killed_at)
