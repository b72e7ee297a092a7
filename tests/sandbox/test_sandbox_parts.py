"""The parts around the batches: the parent parser, uid leases, external programs,
weak-sandbox refusal, `cogolf doctor` and `cogolf bench sandbox`."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys

import pytest

from cogolf.sandbox import kernel, make_sandbox
from cogolf.sandbox.protocol import ProtocolError, parse_line
from cogolf.sandbox.uids import lease_uid
from cogolf.sandbox.walls import WallSpec, run_external


@pytest.mark.parametrize(
    "line",
    [
        b"\xff\xfe",
        b"[" * 100_000,
        b'{"k":"call","value":' + b"9" * 100_000 + b"}",
        b"NaN",
        b'{"k":"call","value":NaN}',
        b"[1, 2]",
        b'{"no_kind": 1}',
        b"",
    ],
)
def test_parent_parser_turns_hostile_lines_into_protocol_errors(line: bytes) -> None:
    with pytest.raises(ProtocolError):
        parse_line(line)


def test_parent_parser_accepts_an_honest_line() -> None:
    assert parse_line(b'{"k":"call","seq":0,"status":"ok","value":[1]}')["value"] == [1]


def test_uid_leases_are_distinct_and_released() -> None:
    with lease_uid() as a, lease_uid() as b:
        if os.geteuid() == 0:
            assert a != b
            assert a >= 1000 and b >= 1000
    # b was let go of first, then a: the uid let go of last is tried first (no scan
    # over the uids other servers on the machine hold), then the one before it
    with lease_uid() as c, lease_uid() as d:
        assert os.geteuid() != 0 or (c, d) == (a, b)


def test_uid_leases_exclude_other_processes() -> None:
    if os.geteuid() != 0:
        pytest.skip("uid leases are only distinct under root")
    code = (
        "import sys, time\n"
        "from cogolf.sandbox.uids import lease_uid\n"
        "with lease_uid() as u:\n"
        "    print(u, flush=True)\n"
        "    sys.stdin.readline()\n"
    )
    proc = subprocess.Popen([sys.executable, "-c", code], stdin=subprocess.PIPE,
                            stdout=subprocess.PIPE, text=True)
    try:
        assert proc.stdout is not None and proc.stdin is not None
        theirs = int(proc.stdout.readline())
        with lease_uid() as ours:
            assert ours != theirs
    finally:
        proc.communicate("\n", timeout=10)


def test_run_external_walls_and_limits(tmp_path: os.PathLike[str]) -> None:
    scratch = str(tmp_path)
    spec = WallSpec(writable=(scratch,), max_processes=4)

    async def go() -> list:
        return [
            await run_external(["/bin/sh", "-c", "echo hi > f && cat f"], cwd=scratch,
                               spec=spec, cpu_seconds=2, wall_seconds=5),
            await run_external(["/bin/cat", "/etc/passwd"], cwd=scratch, spec=spec,
                               cpu_seconds=2, wall_seconds=5),
            await run_external(["/bin/sh", "-c", "while :; do :; done"], cwd=scratch,
                               spec=spec, cpu_seconds=0.3, wall_seconds=5),
            await run_external(["/bin/sleep", "30"], cwd=scratch, spec=spec,
                               cpu_seconds=2, wall_seconds=0.5),
            await run_external(["/bin/cat"], stdin=b"abc" * 1000, cwd=scratch, spec=spec,
                               cpu_seconds=2, wall_seconds=5, max_output_bytes=10),
        ]

    ok, denied, spin, sleeper, capped = asyncio.run(go())
    assert (ok.returncode, ok.stdout, ok.reason) == (0, b"hi\n", "exit")
    assert denied.returncode != 0 and denied.stdout == b""
    assert spin.reason == "cpu" and spin.timed_out
    assert sleeper.reason == "wall" and sleeper.timed_out
    assert capped.stdout == b"abcabcabca" and capped.stdout_truncated


def test_run_external_without_processes_cannot_fork(tmp_path: os.PathLike[str]) -> None:
    run = asyncio.run(run_external(["/bin/sh", "-c", "/bin/true && echo forked"],
                                   cwd=str(tmp_path), spec=WallSpec(), cpu_seconds=2,
                                   wall_seconds=5))
    assert b"forked" not in run.stdout


WEAK_SCRIPT = """
import asyncio, ctypes, sys
libc = ctypes.CDLL(None, use_errno=True)
# Without CAP_SYS_ADMIN in the bounding set, children cannot create namespaces.
assert libc.prctl(24, 21, 0, 0, 0) == 0  # PR_CAPBSET_DROP, CAP_SYS_ADMIN
from cogolf.sandbox import make_sandbox, WeakSandboxError
async def main(mode):
    try:
        await make_sandbox(mode).start()
        print("STARTED")
    except WeakSandboxError as exc:
        print("REFUSED", exc)
    sb = make_sandbox(mode, accept_weak=True)
    await sb.start()
    r = await sb.run_batch("def solve(a):\\n    return a * 2\\n", [[21]])
    print("WEAK", sb.describe()["weak"], r.results[0].value)
    await sb.close()
asyncio.run(main(sys.argv[1]))
"""


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_weak_sandbox_is_refused_unless_accepted(mode: str) -> None:
    if os.geteuid() != 0:
        pytest.skip("needs root to remove a capability")
    out = subprocess.run([sys.executable, "-c", WEAK_SCRIPT, mode], capture_output=True,
                         text=True, timeout=60)
    lines = out.stdout.splitlines()
    assert any(line.startswith("REFUSED") and "namespaces" in line for line in lines), out
    assert "WEAK True 42" in lines, out
    assert "WEAK SANDBOX" in out.stdout + out.stderr


def test_landlock_abi_is_probed() -> None:
    assert kernel.landlock_abi() >= 0


def test_unknown_mode_is_a_clear_error() -> None:
    with pytest.raises(ValueError, match="unknown sandbox mode 'chroot'"):
        make_sandbox("chroot")


def _cogolf(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", *args], capture_output=True,
                          text=True, timeout=timeout)


def test_doctor_lists_every_wall_and_they_hold() -> None:
    out = _cogolf("doctor", "--json")
    report = json.loads(out.stdout)
    assert [sb["mode"] for sb in report["sandboxes"]] == ["fork", "spawn"]
    for sb in report["sandboxes"]:
        for wall in ("namespaces", "root", "pid_namespace", "cgroup", "rlimits", "uid",
                     "no_new_privs", "landlock", "seccomp"):
            assert wall in sb["walls"]
        assert {c["check"] for c in sb["checks"]} >= {
            "fork", "list_root", "signal_server", "pid_namespace", "private_root",
            "stat_host_file", "stat_server_proc"}
    if os.geteuid() == 0:
        assert report["healthy"], report
        assert out.returncode == 0


def test_bench_sandbox_prints_numbers() -> None:
    out = _cogolf("bench", "sandbox", "--batches", "10", "--seconds", "0.3", "--calls", "5",
                  "--json")
    assert out.returncode == 0, out.stderr
    report = json.loads(out.stdout)
    for mode in ("fork", "spawn"):
        r = report["modes"][mode]
        assert r["median_ms"] > 0 and r["p90_ms"] >= r["median_ms"]
        assert set(r["batches_per_second"]) == {"1", "2", "4"}
        # the floor beside each mode: a bare fork round trip, measured in the same run
        assert 0 < r["fork_floor"]["cpu_ms"] < r["cpu_ms_per_batch"]["sandbox"] + \
            r["cpu_ms_per_batch"]["parent"]
        assert r["fork_floor"]["wall_ms"] > 0 and r["cpu_ms_per_batch"]["parent"] > 0
    assert set(report["fork_spawn_ratio"]) == {"1", "2", "4"}


def test_bench_rejects_bad_options() -> None:
    out = _cogolf("bench", "sandbox", "--modes", "nope")
    assert out.returncode == 2 and "unknown mode" in out.stderr
