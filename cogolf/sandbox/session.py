"""One batch, driven from the parent: the lockstep protocol and its enforcement.

Whatever started the child (a fresh interpreter or the fork server), the parent
runs the same session: wait for the walls to be reported, send the program, then
send calls one at a time, timing each against the child's own CPU accounting in
/proc and the batch against the wall clock, and checking every result line's kind,
sequence number and shape. Any limit or violation kills the whole child; the
calls after the one that ended the batch are reported not run (the caller runs
them again in a fresh child).

The batch's wall clock is charged only for time the child could run: time it
spent runnable but waiting for a CPU (the kernel's run delay) is given back, so a
batch that burns CPU beside it cannot push it over its limit.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
import signal
import subprocess
import time
from collections.abc import Iterator, Sequence
from dataclasses import dataclass, field
from typing import Any

import structlog

from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, Limits, LoadStatus
from cogolf.sandbox.cgroups import UidGroups
from cogolf.sandbox.channel import LineReader, PipeWriter, ReadEvent
from cogolf.sandbox.protocol import (
    ProtocolError,
    encode_request,
    field_float,
    field_str,
    field_value,
    parse_line,
)

log = structlog.get_logger(__name__)

_TICKS = os.sysconf("SC_CLK_TCK")
_MIN_RECHECK = 0.005
_PINNED_SECONDS = 0.01  # a step longer than this runs wherever the scheduler likes
_MARK_AGE = 1 / _TICKS  # /proc counts CPU in clock ticks: a finer mark gains nothing
_LOAD_STATUSES = {s.value: s for s in LoadStatus}
# A quick call answers within tens of microseconds: waiting this long for it outside
# the event loop costs other sessions little and this one a future and a wake-up.
_SPIN_SECONDS = 0.0005
# Children whose batch is under way in this process. Sharing the server's CPU and
# waiting outside the event loop both pay only while one batch runs alone: beside
# another, a pinned child would queue behind the other's work on one core, and a
# blocking wait would hold up the other's answers.
_RUNNING: set[ChildProcess] = set()
# However long a child waited for a CPU, a batch ends after this many times its wall
# limit of real time.
_WALL_BACKSTOP = 3.0


@dataclass(eq=False)  # one per process: compared and hashed by identity
class ChildProcess:
    """A running sandboxed child as the parent sees it."""

    pid: int
    pidfd: int
    reader: LineReader
    writer: PipeWriter
    groups: UidGroups | None = None
    popen: subprocess.Popen[bytes] | None = None
    stat_fd: int | None = None
    sched_fd: int | None = None
    reaped: asyncio.Future[bool] | None = None  # set by the fork server, which reaps
    walls: dict[str, str] = field(default_factory=dict)
    # The child's CPU seconds at a moment, and that moment: the base calls are timed
    # from (a new child has used none of its CPU when it is first seen).
    cpu_mark: float = 0.0
    cpu_mark_at: float = field(default_factory=time.monotonic)
    pinned: bool = False  # sharing the server's CPU while its steps are quick

    def __post_init__(self) -> None:
        with contextlib.suppress(OSError):
            self.stat_fd = os.open(f"/proc/{self.pid}/stat", os.O_RDONLY | os.O_CLOEXEC)
        with contextlib.suppress(OSError):
            self.sched_fd = os.open(f"/proc/{self.pid}/schedstat", os.O_RDONLY | os.O_CLOEXEC)

    def pin(self) -> None:
        """Run the child on the CPU the server runs on now.

        In lockstep one of the two is always waiting for the other, so sharing a
        CPU costs no parallelism, and waking a task on the same CPU is several times
        cheaper than waking an idle one (on virtual machines most of all).
        """
        try:
            with open("/proc/thread-self/stat", "rb") as fh:
                cpu = int(fh.read().rsplit(b")", 1)[1].split()[36])
            os.sched_setaffinity(self.pid, {cpu})
            self.pinned = True
        except (OSError, ValueError, IndexError):
            pass

    def unpin(self) -> None:
        """Let the scheduler place the child anywhere the server may run (a slow step
        must not take the server's CPU)."""
        self.pinned = False
        with contextlib.suppress(OSError):
            os.sched_setaffinity(self.pid, os.sched_getaffinity(0))

    def mark_cpu(self, max_age: float) -> None:
        """Read the child's CPU into the mark unless the mark is younger than `max_age`."""
        now = time.monotonic()
        if now - self.cpu_mark_at >= max_age:
            self.cpu_mark = self.cpu_seconds() or self.cpu_mark
            self.cpu_mark_at = now

    def cpu_seconds(self) -> float | None:
        """User + system time of the child from the kernel's accounting."""
        if self.stat_fd is None:
            return None
        try:
            data = os.pread(self.stat_fd, 1024, 0)
        except OSError:
            return None
        rest = data[data.rfind(b")") + 2 :].split()
        try:
            return (int(rest[11]) + int(rest[12])) / _TICKS
        except (IndexError, ValueError):
            return None

    def run_delay(self) -> float | None:
        """Seconds the child has spent runnable but waiting for a CPU (schedstat)."""
        if self.sched_fd is None:
            return None
        try:
            return int(os.pread(self.sched_fd, 128, 0).split()[1]) / 1e9
        except (OSError, IndexError, ValueError):
            return None

    async def wait_exit(self, timeout: float) -> bool:
        loop = asyncio.get_running_loop()
        done = loop.create_future()
        loop.add_reader(self.pidfd, lambda: done.done() or done.set_result(None))
        try:
            await asyncio.wait_for(done, timeout)
            return True
        except TimeoutError:
            return False
        finally:
            loop.remove_reader(self.pidfd)

    def kill(self) -> None:
        """SIGKILL the child and its process group (it made itself a session leader).

        The group is signalled by number only while the pidfd shows the child not yet
        reaped: once it is, its number may already belong to another process group
        (a fork server started since, say).
        """
        try:
            signal.pidfd_send_signal(self.pidfd, signal.SIGKILL)
        except OSError:
            return  # reaped already: nothing of it is left to signal
        with contextlib.suppress(OSError):
            os.killpg(self.pid, signal.SIGKILL)

    def exited(self) -> bool:
        """Whether the child has already exited (without waiting)."""
        poller = select.poll()
        poller.register(self.pidfd, select.POLLIN)
        return bool(poller.poll(0))

    async def wait_gone(self, timeout: float) -> bool:
        """Poll until the child is reaped (its /proc entry is gone), by whoever reaps it."""
        if self.stat_fd is None:
            return False
        loop = asyncio.get_running_loop()
        deadline = loop.time() + timeout
        while True:
            try:
                os.pread(self.stat_fd, 1, 0)
            except OSError:
                return True
            if loop.time() >= deadline:
                return False
            await asyncio.sleep(0.005)

    async def kill_and_reap(self) -> None:
        """Kill the child, its process group and anything in its cgroups; return once
        the child is reaped, so its uid can be leased again with nothing left of it."""
        self.kill()
        if self.reaped is not None:  # the fork server reaps, and says so
            try:
                by_zygote = await asyncio.wait_for(asyncio.shield(self.reaped), 5.0)
            except TimeoutError:
                by_zygote = False
            if not by_zygote and not await self.wait_gone(5.0):
                log.error("sandbox child not reaped", pid=self.pid)
        else:
            await self.wait_exit(5.0)
        if self.popen is not None:
            with contextlib.suppress(subprocess.TimeoutExpired):
                self.popen.wait(timeout=1.0)
        if self.groups is not None and not await self.groups.end():
            log.error("sandbox child left tasks behind", pid=self.pid)

    def death_detail(self) -> str:
        parts = ["process died"]
        if self.popen is not None and self.popen.returncode is not None:
            code = self.popen.returncode
            parts.append(f"signal {-code}" if code < 0 else f"exit code {code}")
        if self.groups is not None and self.groups.memory_failures() > 0:
            parts.append("memory limit reached")
            self.groups.reset_memory_failures()
        return ", ".join(parts)

    def close(self) -> None:
        self.reader.close()
        self.writer.close()
        for fd in (self.pidfd, self.stat_fd, self.sched_fd):
            if fd is not None:
                with contextlib.suppress(OSError):
                    os.close(fd)


def harness_error(n_calls: int, detail: str, started: float) -> BatchResult:
    return BatchResult(
        load=LoadStatus.HARNESS_ERROR,
        load_detail=detail[:300],
        results=[CallResult(status=CallStatus.NOT_RUN, detail="sandbox failed")] * n_calls,
        wall_seconds=time.monotonic() - started,
    )


class WallBudget:
    """A batch's wall-clock budget, charged only for time its child could run.

    The deadline starts at `started + limit`; once it passes, the child's run delay
    since the budget began is added to it (read again each time it passes), up to a
    backstop of `_WALL_BACKSTOP` times the limit. Without schedstat it is plain wall time.
    """

    def __init__(self, child: ChildProcess, limit: float, started: float) -> None:
        self.child = child
        self.limit = limit
        self.started = started
        self.deadline = started + limit
        self.backstop = started + limit * _WALL_BACKSTOP
        self._delay0 = child.run_delay()

    def expired(self) -> bool:
        now = time.monotonic()
        if now < self.deadline:
            return False
        if self._delay0 is not None and self.deadline < self.backstop:
            delay = self.child.run_delay()
            if delay is not None:
                waited = max(delay - self._delay0, 0.0)
                self.deadline = min(self.started + self.limit + waited, self.backstop)
        return now >= self.deadline

    def left(self) -> float:
        """Seconds until the (possibly extended) deadline."""
        self.expired()
        return max(self.deadline - time.monotonic(), 0.0)


class _Stop(Exception):
    """Ends the batch: the status and detail for the current call; the rest are not run."""

    def __init__(self, status: CallStatus, detail: str) -> None:
        super().__init__(detail)
        self.status = status
        self.detail = detail


async def _await_line(child: ChildProcess, cpu_limit: float, wall: WallBudget, *,
                      counted: bool = False) -> dict[str, Any]:
    """The next result line, enforcing CPU (from /proc) and the batch wall clock.

    CPU is counted from now, or with `counted` from the child's last CPU mark, which
    the caller took no more than one clock tick of wall time before the call began:
    that can only overstate the call's CPU (by at most that tick), never understate.
    """
    if not counted:
        child.mark_cpu(0.0)
    cpu_start = child.cpu_mark
    # CPU used cannot outrun wall time for a single-task child, so no poll is
    # needed until `cpu_limit` of wall time has passed since the mark.
    wait = cpu_limit - (time.monotonic() - child.cpu_mark_at)
    spin = _SPIN_SECONDS if len(_RUNNING) <= 1 else 0.0
    while True:
        remaining_wall = wall.deadline - time.monotonic()
        timeout = max(min(wait, remaining_wall), 0.0)
        pinned = child.pinned
        got = await child.reader.readline(min(timeout, _PINNED_SECONDS) if pinned else timeout,
                                          spin=spin)
        spin = 0.0  # only the first wait: a slow step sleeps on the event loop
        if isinstance(got, bytes):
            try:
                return parse_line(got)
            except ProtocolError as exc:
                raise _Stop(CallStatus.CRASH, f"protocol violation: {exc}") from exc
        if got is ReadEvent.OVERFLOW:
            raise _Stop(CallStatus.CRASH, f"protocol violation: {child.reader.overflow}")
        if got is ReadEvent.EOF:
            await child.wait_exit(0.5)
            if child.popen is not None:
                with contextlib.suppress(subprocess.TimeoutExpired):
                    child.popen.wait(timeout=0.5)
            raise _Stop(CallStatus.CRASH, child.death_detail())
        if pinned:
            child.unpin()  # then checked as at any other early wake-up
        used = (child.cpu_seconds() or cpu_start) - cpu_start
        if used >= cpu_limit:
            raise _Stop(CallStatus.TIMEOUT, f"used {used:.2f} s of CPU (limit {cpu_limit:g} s)")
        if wall.expired():
            raise _Stop(CallStatus.TIMEOUT, f"batch wall clock ({wall.limit:g} s) ran out")
        wait = max(cpu_limit - used, _MIN_RECHECK)


async def _send(child: ChildProcess, obj: dict[str, Any], wall: WallBudget) -> None:
    ok = await child.writer.write(encode_request(obj), wall.left())
    if not ok:
        # The child stopped reading: it died, closed its descriptor, or is stuck.
        if await child.wait_exit(0.05):
            raise _Stop(CallStatus.CRASH, child.death_detail())
        raise _Stop(CallStatus.CRASH, "child stopped reading its requests")


async def await_ready(child: ChildProcess, deadline: float, wall: float) -> str:
    """Read the child's walls report into `child.walls`; "" or why it failed.

    Nothing of a program has run yet, so any failure here is the sandbox's own.
    """
    try:
        ready = await _await_line(child, wall, WallBudget(child, wall, deadline - wall),
                                  counted=True)
    except _Stop as stop:
        return f"sandbox child did not start: {stop.detail}"
    if ready.get("k") == "harness":
        return "sandbox refused: " + field_str(ready, "detail", 600)
    walls = ready.get("walls")
    if ready.get("k") != "ready" or type(walls) is not dict:
        return "sandbox child sent no ready line"
    child.walls = {str(k): str(v) for k, v in walls.items()}
    return ""


async def run_session(
    child: ChildProcess,
    source: str,
    calls: Sequence[list[Any]],
    *,
    function: str,
    limits: Limits,
    started: float,
    rlimits: dict[str, int],
    ready: bool = False,
) -> BatchResult:
    """One batch on `child`; `ready` when its walls report was already read (a
    pre-forked child), and `rlimits` are the backstops the child sets before loading."""
    with running(child):
        wall = WallBudget(child, limits.wall_seconds_per_batch, started)
        failed = await load(child, source, function=function, limits=limits, wall=wall,
                            rlimits=rlimits, ready=ready, n_calls=len(calls))
        if failed is not None:
            return failed
        return BatchResult(load=LoadStatus.OK, results=await call_all(child, calls, limits, wall),
                           wall_seconds=time.monotonic() - started)


@contextlib.contextmanager
def running(child: ChildProcess) -> Iterator[None]:
    """Count `child`'s batch as under way (see `_RUNNING`) while the block runs."""
    _RUNNING.add(child)
    if len(_RUNNING) > 1:
        for other in _RUNNING:
            if other.pinned:
                other.unpin()
    try:
        yield
    finally:
        _RUNNING.discard(child)


def pin_if_alone(child: ChildProcess) -> None:
    if len(_RUNNING) == 1:
        child.pin()


async def load(child: ChildProcess, source: str, *, function: str, limits: Limits,
               wall: WallBudget, rlimits: dict[str, int], ready: bool,
               n_calls: int) -> BatchResult | None:
    """Send the program and wait for its load; None once it is loaded, else the batch's
    result (every call not run)."""
    n, started = n_calls, wall.started
    # 1. the program goes into the pipe at once: a fresh child reads it only once its
    # walls are up, which saves a round trip per batch.
    header = {"source": source, "function": function, "max_line": limits.max_result_line_bytes,
              **rlimits}
    # The load may begin before a fresh child's ready line is read here: its CPU budget
    # counts from before the walls went up, so it can only be stricter than the limit.
    child.mark_cpu(0.0)
    if ready:
        pin_if_alone(child)
    try:
        await _send(child, header, wall)
    except _Stop as stop:
        return harness_error(n, f"sandbox child did not start: {stop.detail}", started)
    if not ready:
        failure = await await_ready(child, wall.deadline, wall.limit)
        if failure:
            return harness_error(n, failure, started)
        pin_if_alone(child)

    # 2. load
    load_cpu = limits.load_cpu_seconds
    try:
        msg = await _await_line(child, load_cpu, wall, counted=True)
        if msg.get("k") != "load":
            raise _Stop(CallStatus.CRASH, "protocol violation: expected the load line")
        status = _LOAD_STATUSES.get(field_str(msg, "status"))
        if status is None or status in (LoadStatus.HARNESS_ERROR, LoadStatus.CRASH,
                                        LoadStatus.LOAD_TIMEOUT):
            raise _Stop(CallStatus.CRASH, "protocol violation: bad load status")
        load_detail = field_str(msg, "detail")
    except _Stop as stop:
        status = LoadStatus.LOAD_TIMEOUT if stop.status is CallStatus.TIMEOUT else LoadStatus.CRASH
        load_detail = stop.detail
    if status is LoadStatus.OK:
        return None
    return BatchResult(
        load=status, load_detail=load_detail,
        results=[CallResult(status=CallStatus.NOT_RUN, detail=f"program {status.value}")] * n,
        wall_seconds=time.monotonic() - started,
    )


async def call_all(child: ChildProcess, calls: Sequence[list[Any]], limits: Limits,
                   wall: WallBudget, first_seq: int = 0) -> list[CallResult]:
    """Each call in lockstep on a loaded child, numbered from `first_seq`; after one that
    ends the child's batch (a timeout, a crash), the rest are not run."""
    results: list[CallResult] = []
    n = len(calls)
    cpu_limit = limits.cpu_seconds_per_call
    for i, args in enumerate(calls):
        seq = first_seq + i
        try:
            child.mark_cpu(_MARK_AGE)
            await _send(child, {"seq": seq, "args": list(args)}, wall)
            results.append(_call_result(
                await _await_line(child, cpu_limit, wall, counted=True), seq))
        except _Stop as stop:
            results.append(CallResult(status=stop.status, detail=stop.detail))
            rest = f"batch ended at call {i}: {stop.detail}"
            results.extend(CallResult(status=CallStatus.NOT_RUN, detail=rest[:300])
                           for _ in range(n - i - 1))
            break
    return results


def _call_result(msg: dict[str, Any], seq: int) -> CallResult:
    if msg.get("k") != "call" or type(msg.get("seq")) is not int:
        raise _Stop(CallStatus.CRASH, "protocol violation: expected a call line")
    if msg["seq"] != seq:
        raise _Stop(CallStatus.CRASH,
                    f"protocol violation: result for call {msg['seq']} while {seq} was running")
    cpu = field_float(msg, "cpu")
    status = field_str(msg, "status")
    try:
        if status == "ok":
            return CallResult(status=CallStatus.OK, value=field_value(msg), cpu_seconds=cpu)
        if status == "error":
            return CallResult(status=CallStatus.ERROR, detail=field_str(msg, "detail", 80),
                              cpu_seconds=cpu)
        if status == "invalid":
            return CallResult(status=CallStatus.INVALID, detail=field_str(msg, "detail"),
                              cpu_seconds=cpu)
    except ProtocolError as exc:
        raise _Stop(CallStatus.CRASH, f"protocol violation: {exc}") from exc
    raise _Stop(CallStatus.CRASH, "protocol violation: unknown call status")
