"""The fast paths keep every wall: the split seccomp filter, pre-forked children,
reaping before a uid is released, and the fixes to external runs (a leftover
process of the uid, PATH searches that spawn, toolchain configuration)."""

from __future__ import annotations

import asyncio
import itertools
import json
import os
import signal
import subprocess
import sys
from functools import partial

import pytest

from cogolf.sandbox import forkserver, kernel
from cogolf.sandbox.api import BatchResult, CallStatus, Limits, LoadStatus
from cogolf.sandbox.forkserver import ForkSandbox
from cogolf.sandbox.uids import lease_uid
from cogolf.sandbox.walls import (
    NPROC_SLACK,
    SYSTEM_CONFIG_PATHS,
    WallSpec,
    enter_walls,
    run_external,
)
from tests.polling import until

from .conftest import LoopThread, Runner


def _decode(program: bytes) -> list[tuple[int, int, int, int]]:
    return [
        tuple(
            int.from_bytes(program[i + a : i + b], "little")  # type: ignore[misc]
            for a, b in ((0, 2), (2, 3), (3, 4), (4, 8))
        )
        for i in range(0, len(program), 8)
    ]


def _denied_numbers(program: bytes) -> set[int]:
    """Syscall numbers answered EPERM unconditionally: `JEQ nr; RET errno` pairs."""
    insns = _decode(program)
    out = set()
    for (code, _jt, jf, k), nxt in itertools.pairwise(insns):
        if code == 0x15 and jf == 1 and nxt[0] == 0x06 and nxt[3] == 0x00050001:
            out.add(k)
    return out


def test_split_filter_denies_exactly_what_the_whole_filter_denies() -> None:
    whole = kernel.seccomp_program(
        allow_processes=False, allow_exec=False, allow_network=False, self_pid=4242
    )
    base, child = kernel.seccomp_split(self_pid=4242)
    assert _denied_numbers(base) | _denied_numbers(child) == _denied_numbers(whole)
    assert not _denied_numbers(base) & _denied_numbers(child)
    # process creation, the uid calls and pidfd_open are on each child, not the zygote
    assert {56, 57, 58, 435, 105, 117, 272, 434} <= _denied_numbers(child)

    # the signal rule names the child's own pid; the prctl/ioctl argument rules are on
    # the base (compared values of JEQ instructions only)
    def compared(program: bytes) -> set[int]:
        return {k for code, _jt, _jf, k in _decode(program) if code == 0x15}

    assert 4242 in compared(child) and 4242 not in compared(base)
    assert {157, 16, kernel.PR_SET_DUMPABLE, 0x5412} <= compared(base)
    assert {157, 16, 0x5412}.isdisjoint(compared(child))
    assert compared(whole) == compared(base) | compared(child)


def test_socketpair_is_denied_unless_asked_for() -> None:
    plain = kernel.denied_syscalls(allow_processes=True, allow_exec=True, allow_network=False)
    paired = kernel.denied_syscalls(
        allow_processes=True, allow_exec=True, allow_network=False, allow_socketpair=True
    )
    assert "socketpair" in plain and "socketpair" not in paired
    assert set(plain) - set(paired) == {"socketpair"}


UID_SOURCE = "import os\ndef solve():\n    return os.getuid()\n"


def _procs_of(uid: int) -> list[int]:
    found = []
    for name in os.listdir("/proc"):
        if name.isdigit():
            try:
                if os.stat(f"/proc/{name}").st_uid == uid:
                    found.append(int(name))
            except OSError:
                continue
    return found


def _state(pid: int) -> str:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return fh.read().rsplit(")", 1)[-1].split()[0]
    except OSError:
        return "gone"


def _parent(pid: int) -> int:
    try:
        with open(f"/proc/{pid}/stat") as fh:
            return int(fh.read().rsplit(")", 1)[-1].split()[1])
    except (OSError, ValueError, IndexError):
        return 0


def _cmdline(pid: int) -> bytes:
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read()
    except OSError:
        return b""


def _fill(loop_thread: LoopThread, sb: ForkSandbox, n: int) -> None:
    for _ in range(100):
        if len(sb._pools.get(None, [])) >= n:
            return
        loop_thread.run(asyncio.sleep(0.05))
    raise AssertionError(f"the pool did not fill: {len(sb._pools.get(None, []))} of {n}")


def test_children_are_reaped_before_their_uid_is_free(runner: Runner, needs_root: None) -> None:
    results = runner.gather(*[(UID_SOURCE, [[]]) for _ in range(4)])
    uids = [r.results[0].value for r in results]
    assert len(set(uids)) == 4, uids  # each program that ran at once had its own uid
    runner.loop.run(runner.sandbox.drain())  # type: ignore[attr-defined]
    # Our children are forked by this process (spawn) or by our zygote (fork). Once a
    # uid is free another test process may lease it, and its children are briefly
    # zombies too while they exit, so only our own children are looked at.
    zygote = getattr(getattr(runner.sandbox, "zygote", None), "pid", None)
    ours = {os.getpid(), zygote}
    for uid in uids:
        # with the child reaped nothing of it is left, not even a zombie
        zombies = [p for p in _procs_of(uid) if _state(p) == "Z" and _parent(p) in ours]
        assert zombies == []


def test_pre_forked_children_take_each_batch_limits(
    loop_thread: LoopThread, needs_root: None
) -> None:
    sb = ForkSandbox(pool_size=2)
    loop_thread.run(sb.start())
    try:
        _fill(loop_thread, sb, 2)
        bomb = "def solve(n):\n    return len(bytearray(n))\n"
        small = Limits(memory_bytes=64 << 20)
        tight = loop_thread.run(sb.run_batch(bomb, [[100 << 20]], limits=small))
        roomy = loop_thread.run(sb.run_batch(bomb, [[100 << 20]]))
        assert tight.results[0].status in (CallStatus.ERROR, CallStatus.CRASH), tight
        assert roomy.results[0].status is CallStatus.OK and roomy.results[0].value == 100 << 20
        # a CPU limit set per batch holds in a child that was started before it was known
        spin = loop_thread.run(
            sb.run_batch(
                "def solve():\n    while True:\n        pass\n",
                [[]],
                limits=Limits(cpu_seconds_per_call=0.2),
            )
        )
        assert spin.results[0].status is CallStatus.TIMEOUT and "CPU" in spin.results[0].detail
        walls = sb.describe()["walls"]
        assert all(v.startswith("ok") for k, v in walls.items()), walls
    finally:
        loop_thread.run(sb.close())
    assert not sb._pools


def test_a_pre_forked_child_that_died_is_not_used(
    loop_thread: LoopThread, needs_root: None
) -> None:
    sb = ForkSandbox(pool_size=1)
    loop_thread.run(sb.start())
    try:
        _fill(loop_thread, sb, 1)
        (warm,) = sb._pools[None]
        os.kill(warm.child.pid, signal.SIGKILL)
        loop_thread.run(until(lambda: _state(warm.child.pid) in ("Z", "gone"), "the child dies"))
        got = loop_thread.run(sb.run_batch("def solve():\n    return 7\n", [[]]))
        assert got.load is LoadStatus.OK and got.results[0].value == 7
    finally:
        loop_thread.run(sb.close())


def test_exec_works_while_the_uid_still_owns_a_process(
    tmp_path: os.PathLike[str], needs_root: None
) -> None:
    spec = WallSpec(max_processes=0)
    with lease_uid() as uid:
        # stands in for a previous holder's process that is still exiting
        stray = subprocess.Popen(["/bin/sleep", "30"], user=uid, group=uid)
        try:
            out = subprocess.run(
                ["/bin/sh", "-c", "ulimit -p; echo ran"],
                capture_output=True,
                cwd=str(tmp_path),
                timeout=10,
                preexec_fn=partial(enter_walls, spec, uid, ()),
            )
        finally:
            stray.kill()
            stray.wait()
    assert out.returncode == 0, out
    assert out.stdout.split() == [str(1 + NPROC_SLACK).encode(), b"ran"]


def test_run_external_releases_a_uid_with_no_process_left(
    tmp_path: os.PathLike[str], needs_root: None
) -> None:
    spec = WallSpec(max_processes=4)
    script = "(/bin/sleep 30 &) ; (/bin/sleep 30 &) ; id -u"

    async def go() -> list[int]:
        uids = []
        for _ in range(3):
            run = await run_external(
                ["/bin/sh", "-c", script],
                cwd=str(tmp_path),
                spec=spec,
                cpu_seconds=2,
                wall_seconds=5,
            )
            assert run.reason == "exit", run
            uids.append(int(run.stdout))
        return uids

    for uid in asyncio.run(go()):
        # the sleepers were orphaned to init, killed through the cgroup and reaped
        # before the lease ended (another server may lease the uid since: look only
        # for what this run left)
        left = [pid for pid in _procs_of(uid) if _cmdline(pid) == b"/bin/sleep\x0030\x00"]
        assert left == []


def test_toolchain_configuration_is_readable_not_etc(tmp_path: os.PathLike[str]) -> None:
    present = [p for p in SYSTEM_CONFIG_PATHS if os.path.isdir(p) and os.listdir(p)]
    if not present:
        pytest.skip("no toolchain configuration directory on this machine")
    target = os.path.join(present[0], sorted(os.listdir(present[0]))[0])

    async def go() -> tuple:
        spec = WallSpec()
        return (
            await run_external(
                ["/bin/cat", target], cwd=str(tmp_path), spec=spec, cpu_seconds=2, wall_seconds=5
            ),
            await run_external(
                ["/bin/cat", "/etc/hostname"],
                cwd=str(tmp_path),
                spec=spec,
                cpu_seconds=2,
                wall_seconds=5,
            ),
        )

    config, other = asyncio.run(go())
    with open(target, "rb") as fh:
        assert config.returncode == 0 and config.stdout == fh.read()
    assert other.returncode != 0 and other.stdout == b""


PAIR = "import socket\nsocket.socketpair()\nprint('paired')\n"


@pytest.mark.parametrize("processes", [0, 2])
def test_socket_pair_only_where_processes_are_allowed(
    tmp_path: os.PathLike[str], processes: int
) -> None:
    python = "/usr/bin/python3"
    if not os.path.exists(python):
        pytest.skip("no system python3 to run behind the walls")
    run = asyncio.run(
        run_external(
            [python, "-I", "-S", "-c", PAIR],
            cwd=str(tmp_path),
            spec=WallSpec(max_processes=processes),
            cpu_seconds=5,
            wall_seconds=10,
        )
    )
    if processes:
        assert run.stdout == b"paired\n", run
    else:
        assert b"paired" not in run.stdout and b"PermissionError" in run.stderr, run


def test_bench_hole_prints_numbers() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "bench",
            "hole",
            "--rounds",
            "1",
            "--modes",
            "fork",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    fork = report["modes"]["fork"]
    assert report["specs"] >= 12 and fork["holes_timed"] == report["specs"]
    assert 0 < fork["median_ms"] <= fork["p90_ms"] <= fork["max_ms"]
    assert fork["holes_per_second"] > 0
    assert set(fork["per_spec_median_ms"]) and all(
        v > 0 for v in fork["per_spec_median_ms"].values()
    )
    bad = subprocess.run(
        [sys.executable, "-m", "cogolf", "bench", "hole", "--rounds", "0"],
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert bad.returncode == 2 and "--rounds" in bad.stderr


HASH_SOURCE = "def solve():\n    return [hash('abc'), ','.join({'ash', 'basil', 'cedar'})]\n"


def test_many_hash_seeds_at_once_each_get_their_own_hashing(
    loop_thread: LoopThread, needs_root: None, monkeypatch: pytest.MonkeyPatch
) -> None:
    # Fewer zygotes kept than seeds in use: idle ones are stopped, busy ones never.
    monkeypatch.setattr(forkserver, "MAX_HASH_SEEDS", 2)
    sb = ForkSandbox(pool_size=1)
    loop_thread.run(sb.start())
    seeds = [11, 22, 33, 44, 55]
    try:
        rounds = []
        for _ in range(2):

            async def all_seeds() -> list[BatchResult]:
                return list(await asyncio.gather(
                    *(sb.run_batch(HASH_SOURCE, [[]], hash_seed=s) for s in seeds)))

            got = loop_thread.run(all_seeds())
            assert all(r.load is LoadStatus.OK for r in got), got
            rounds.append([r.results[0].value for r in got])
        assert rounds[0] == rounds[1]  # a seed's zygote started again hashes the same
        assert len({v[0] for v in rounds[0]}) == len(seeds)
        for seed, value in zip(seeds, rounds[0], strict=True):
            out = subprocess.run(
                [sys.executable, "-c", "print(hash('abc'))"],
                env={"PYTHONHASHSEED": str(seed)}, capture_output=True, text=True, check=True,
            )
            assert value[0] == int(out.stdout)
        assert len(sb._seeded) <= len(seeds)
        zygotes = [z.pid for z in sb._seeded.values()]
    finally:
        loop_thread.run(sb.close())
    assert not sb._seeded
    assert not [pid for pid in zygotes if pid is not None and os.path.exists(f"/proc/{pid}")]


def test_a_sandbox_for_one_hash_seed_starts_one_fork_server_and_its_children(
    loop_thread: LoopThread, needs_root: None
) -> None:
    """One match's sandbox: its probe and its children forked ahead are of the match's
    hash seed; the sandbox's own fork server starts only when a batch asks for it."""
    seed = 3923502154
    sb = ForkSandbox(prestart=(seed,))
    loop_thread.run(sb.start())
    try:
        assert sb.zygote is None and list(sb._seeded) == [seed]
        assert list(sb._pools) == [seed]
        got = loop_thread.run(sb.run_batch(HASH_SOURCE, [[]], hash_seed=seed))
        assert got.load is LoadStatus.OK and sb.zygote is None
        own = loop_thread.run(sb.run_batch(HASH_SOURCE, [[]]))
        assert own.load is LoadStatus.OK and sb.zygote is not None
        assert sb.describe()["walls"]["seccomp"] == "ok"
    finally:
        loop_thread.run(sb.close())


AFFINITY_SOURCE = (
    "import os, time\n"
    "def solve(sleep):\n"
    "    time.sleep(sleep)\n"
    "    return len(os.sched_getaffinity(0))\n"
)


def test_a_batch_beside_another_is_not_pinned_to_the_servers_cpu(
    loop_thread: LoopThread, needs_root: None
) -> None:
    """A child shares the server's CPU only while its batch runs alone (in lockstep one
    of the two always waits); beside another batch it runs on any CPU, so two batches
    use two cores."""
    cpus = len(os.sched_getaffinity(0))
    if cpus < 2:
        pytest.skip("one CPU: nothing to pin to")
    sb = ForkSandbox(prestart=())
    loop_thread.run(sb.start())
    try:

        async def two() -> list[BatchResult]:
            slow = asyncio.ensure_future(sb.run_batch(AFFINITY_SOURCE, [[2.0]]))
            await asyncio.sleep(0.2)  # its child is asleep in its call now
            quick = await sb.run_batch(AFFINITY_SOURCE, [[0.0]] * 10)
            return [await slow, quick]

        slow, quick = loop_thread.run(two())
        assert slow.results[0].status is CallStatus.OK
        assert [r.value for r in quick.results] == [cpus] * 10
    finally:
        loop_thread.run(sb.close())
