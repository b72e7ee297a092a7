"""Nothing a walled program starts outlives its walls, on any path, and a uid is leased
again only once nothing of it runs.

Every hostile program here leaves daemons (`setsid`, one holding the run's output,
one not) marked with a number of the test's own in their argv, so only what this
test started is looked for: other servers on the machine lease the same uids.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cogolf.sandbox import kernel
from cogolf.sandbox.cgroups import (
    END_SECONDS,
    EXTERNAL_PREFIX,
    FREEZER,
    UNIFIED,
    UidGroups,
    available_bases,
    controller_base,
)
from cogolf.sandbox.uids import CLEAN, SWEEP_SECONDS, lease_uid, lock_dir
from cogolf.sandbox.walls import WallSpec, run_external
from tests.processes import cmdline, ctrl_c, in_session, sleepers, token, wait_until

REPO = Path(__file__).resolve().parents[2]
LEASE = "from cogolf.sandbox.uids import lease_uid\nwith lease_uid():\n    pass\n"


def daemons(mark: str) -> str:
    """Two daemons that left the run's session: one holds its output, one let it go."""
    return f"setsid sleep {mark} & (setsid sleep {mark} >&- 2>&- &); echo started"


def test_daemons_end_with_the_run_on_exit_timeout_and_cancel(
    tmp_path: Path, needs_root: None
) -> None:
    """A cancel (Ctrl-C) once it all runs, and one while the program starts: asyncio,
    cancelled while it connects a program's pipes, kills the program alone and then
    waits for pipes its daemons hold, forever."""
    spec = WallSpec(max_processes=8)
    marks = [token() for _ in range(4)]

    async def go() -> tuple:
        def run(script: str, wall: float) -> asyncio.Future:
            return asyncio.ensure_future(run_external(
                ["/bin/sh", "-c", script], cwd=str(tmp_path), spec=spec, cpu_seconds=5,
                wall_seconds=wall))

        exited = await run(daemons(marks[0]), 10)
        timed_out = await run(daemons(marks[1]) + "; sleep 30", 1.0)
        cancelled = run(daemons(marks[2]) + "; sleep 30", 30)
        give_up = time.monotonic() + 20
        while len(sleepers(marks[2])) < 2 and time.monotonic() < give_up:
            await asyncio.sleep(0.02)
        assert not cancelled.done() and len(sleepers(marks[2])) == 2
        cancelled.cancel()  # as Ctrl-C would, once it is all running
        with contextlib.suppress(asyncio.CancelledError):
            await cancelled
        starting = run(daemons(marks[3]) + "; sleep 30", 30)
        await asyncio.sleep(0)  # it runs up to its first wait
        time.sleep(0.5)  # the program may fork its daemons; the loop connects no pipe
        starting.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await asyncio.wait_for(starting, 20)
        return exited, timed_out

    exited, timed_out = asyncio.run(go())
    assert (exited.reason, exited.stdout) == ("exit", b"started\n")
    assert exited.wall_seconds < 3  # the daemon holding its output did not keep it going
    assert timed_out.reason == "wall"
    for mark in marks:
        assert sleepers(mark) == [], mark


def _start_in(groups: UidGroups, uid: int, script: str) -> subprocess.Popen[bytes]:
    def enter() -> None:
        kernel.join_cgroups(tuple(groups.join_paths()))
        kernel.drop_uid(uid)

    return subprocess.Popen(["/bin/sh", "-c", script], preexec_fn=enter,
                            start_new_session=True, stdout=subprocess.DEVNULL,
                            stderr=subprocess.DEVNULL)


@pytest.mark.parametrize("way", [UNIFIED, FREEZER, "signals"])
def test_each_way_of_killing_ends_a_tree_that_keeps_forking(way: str, needs_root: None) -> None:
    """cgroup.kill, else the freezer, else rounds of signals: each ends a tree whose
    every process forks as fast as it can, setsid daemons included."""
    bases = available_bases(("pids", UNIFIED))
    if way != UNIFIED:
        bases.pop(UNIFIED, None)
        bases.pop(FREEZER, None)
    if way == FREEZER and (freezer := controller_base(FREEZER)) is not None:
        bases[FREEZER] = freezer
    if way != "signals" and way not in bases:
        pytest.skip(f"no {way} hierarchy on this machine")
    mark = token()
    with lease_uid() as uid:
        groups = UidGroups.create(uid, bases, EXTERNAL_PREFIX)
        assert set(groups.dirs) == set(bases)
        groups.configure(max_tasks=48, memory_bytes=None)
        # zombies of the last tree killed in this uid's groups keep their places in
        # pids.max until init reaps them
        assert groups.end_blocking(10, reaped=True)
        proc = _start_in(groups, uid, f"while :; do setsid sleep {mark} & sleep {mark} & done")
        try:
            assert wait_until(lambda: len(groups.pids()) >= 40, 10)
            started = time.monotonic()
            assert groups.end_blocking(END_SECONDS)
            took = time.monotonic() - started
        finally:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
            proc.wait(5)
        # as every holder does, the uid goes on with its zombies reaped (they count in
        # its RLIMIT_NPROC until then)
        assert groups.end_blocking(10, reaped=True)
    assert sleepers(mark) == []
    assert took < 1.0, took


def test_a_uid_that_cannot_be_emptied_is_not_leased_again(needs_root: None) -> None:
    """A task that SIGKILL cannot end (frozen by a freezer no sweep knows of) keeps its
    uid unclean: its lease's end gives up after END_SECONDS, a lease passes it over
    within SWEEP_SECONDS, and once it can die the sweep of unleased uids frees it."""
    freezer_base = controller_base(FREEZER)
    if freezer_base is None:
        pytest.skip("no freezer hierarchy to make a task unkillable with")
    mark = token()
    frozen = os.path.join(freezer_base, f"test-stuck-{os.getpid()}")
    os.makedirs(frozen, exist_ok=True)
    state = os.path.join(frozen, "freezer.state")
    try:
        with lease_uid() as uid:
            groups = UidGroups.create(uid, available_bases(("pids",)), EXTERNAL_PREFIX)
            groups.configure(max_tasks=4, memory_bytes=None)
            stray = _start_in(UidGroups({**groups.dirs, "test": frozen}), uid,
                              f"exec sleep {mark}")
            assert wait_until(lambda: len(sleepers(mark)) == 1, 5)
            Path(state).write_text("FROZEN")
            assert wait_until(lambda: Path(state).read_text().strip() == "FROZEN", 5)
            ending = time.monotonic()
        gave_up = time.monotonic() - ending
        assert END_SECONDS <= gave_up < END_SECONDS + 1.0
        with open(os.path.join(lock_dir(), str(uid)), "rb") as fh:
            assert fh.read(1) != CLEAN
        for bound in (SWEEP_SECONDS + 1.0, 0.5):  # then passed over without a sweep
            leasing = time.monotonic()
            with lease_uid() as other:
                assert other != uid
            assert time.monotonic() - leasing < bound
        assert sleepers(mark) == [stray.pid]
        Path(state).write_text("THAWED")  # the SIGKILLs it was sent take it now
        stray.wait(5)

        def swept() -> bool:
            # the next process's first lease sweeps it (unless the uid is leased then:
            # an older server on this machine may lease it, not knowing of the mark)
            subprocess.run([sys.executable, "-c", LEASE], cwd=REPO, check=True, timeout=30)
            with open(os.path.join(lock_dir(), str(uid)), "rb") as fh:
                return fh.read(1) == CLEAN

        assert wait_until(swept, 30)
    finally:
        with contextlib.suppress(OSError):
            Path(state).write_text("THAWED")
        with contextlib.suppress(OSError):
            os.rmdir(frozen)


RUNNER = """
import asyncio, sys
from cogolf.sandbox.walls import WallSpec, run_external
print("go", flush=True)
asyncio.run(run_external(["/bin/sh", "-c", sys.argv[1]], cwd="/", spec=WallSpec(max_processes=8),
                         cpu_seconds=600, wall_seconds=600))
"""


def test_a_runner_killed_outright_leaves_its_uid_to_the_next_start_up_sweep(
    needs_root: None
) -> None:
    """SIGKILL of the runner itself: nothing can clean up then, so the uid stays marked
    in use, and the first lease of the next process sweeps it."""
    mark = token()
    runner = subprocess.Popen([sys.executable, "-c", RUNNER, daemons(mark) + f"; sleep {mark}"],
                              cwd=REPO, stdout=subprocess.PIPE)
    try:
        assert wait_until(lambda: len(sleepers(mark)) == 3, 20)
    finally:
        runner.kill()
        runner.wait(5)
    assert len(sleepers(mark)) == 3  # no one was left to end them

    def swept() -> bool:
        # the next process's first lease sweeps it (unless the uid is leased then: an
        # older server on this machine may lease it, not knowing of the mark)
        subprocess.run([sys.executable, "-c", LEASE], cwd=REPO, check=True, timeout=30)
        return sleepers(mark) == []

    assert wait_until(swept, 30)


FORK_RUNNER = """
import asyncio, sys
from cogolf.sandbox import make_sandbox
from cogolf.sandbox.api import Limits
async def main():
    sb = make_sandbox("fork", hash_seeds=())
    await sb.start()
    # its CPU backstop (RLIMIT_CPU) is then 5 s
    limits = Limits(cpu_seconds_per_call=2.0, load_cpu_seconds=0.2, wall_seconds_per_batch=60)
    spin = asyncio.ensure_future(sb.run_batch("def solve():\\n    while True:\\n        pass\\n",
                                              [[]], limits=limits))
    await asyncio.sleep(1.0)  # the pool refilled, the spinning batch under way
    open(sys.argv[1], "w").write("ready" if not spin.done() else "spin ended early")
    await spin
asyncio.run(main())
"""


def _stat(pid: int) -> tuple[int, bytes] | None:
    """(parent, start time) of a running process; None once gone or a zombie."""
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            fields = fh.read().rsplit(b")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == b"Z" else (int(fields[1]), fields[19])


def _descendants(pid: int) -> set[tuple[int, bytes]]:
    """(pid, start time) of every running process below `pid`."""
    stats = {int(n): _stat(int(n)) for n in os.listdir("/proc") if n.isdigit()}
    below, todo = set(), [pid]
    while todo:
        parent = todo.pop()
        for child, st in stats.items():
            if st is not None and st[0] == parent:
                below.add((child, st[1]))
                todo.append(child)
    return below


def _alive(procs: set[tuple[int, bytes]]) -> set[int]:
    return {pid for pid, start in procs if (_stat(pid) or (0, b""))[1] == start}


@pytest.mark.slow
def test_a_fork_sandbox_killed_outright_leaves_no_fork_server_or_child(
    tmp_path: Path, needs_root: None
) -> None:
    """The fork server exits when the server's end of its socket closes, a pre-forked
    child when its request pipe does, a running one at its CPU backstop."""
    ready = tmp_path / "ready"
    runner = subprocess.Popen([sys.executable, "-c", FORK_RUNNER, str(ready)], cwd=REPO,
                              stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    try:
        assert wait_until(lambda: ready.exists() and ready.read_text() != "", 60)
        assert ready.read_text() == "ready"
        below = _descendants(runner.pid)
        assert len(below) >= 3  # the zygote, pre-forked children, the spinning one
    finally:
        runner.kill()
        runner.wait(5)
    assert wait_until(lambda: not _alive(below), 30), _alive(below)  # CPU, on a busy machine


@pytest.mark.slow
def test_ctrl_c_of_play_leaves_no_fork_server_child_or_bot(
    tmp_path: Path, needs_root: None
) -> None:
    with in_session([sys.executable, "-m", "cogolf", "play", "--holes", "9", "--replays",
                     str(tmp_path)], REPO) as play:
        def under_way() -> bool:  # its fork server and both bots are up
            args = [cmdline(pid) for pid, _ in _descendants(play.pid)]
            return ((any(b"zygote" in a for a in args) and sum(b"bot" in a for a in args) == 2)
                    or play.poll() is not None)

        assert wait_until(under_way, 60)
        assert play.poll() is None
        below = _descendants(play.pid)
        ctrl_c(play)
    assert play.returncode in (0, 130)
    assert wait_until(lambda: not _alive(below), 10), [cmdline(p) for p in _alive(below)]
