"""Which walls are up on this machine, and whether they hold.

`walls` reports what the child could put up; `CHECKS` are hostile probes run
with the audit hook switched off, so each one exercises a kernel wall alone.
A probe holds when its call fails, except the `TRUE_WHEN_HELD` ones, which
return whether the wall holds.
"""

from __future__ import annotations

import os
from dataclasses import dataclass
from typing import Any

from cogolf.sandbox.api import CallStatus
from cogolf.sandbox.base import BaseSandbox

PROBE = '''
import os, sys
def solve(check, server_pid):
    if check == "uid":
        return os.getuid() != 0 and os.geteuid() != 0
    if check == "pid_namespace":
        return os.getpid() == 1 and os.getppid() == 0
    if check == "private_root":
        return [p for p in ("/etc", "/usr", "/proc", "/tmp", "/dev") if os.path.lexists(p)] == []
    if check == "stat_host_file":
        return str(os.stat("/etc/passwd"))
    if check == "stat_server_proc":
        return str(os.stat(f"/proc/{server_pid}"))
    if check == "fork":
        os.fork()
    elif check == "posix_spawn":
        os.posix_spawn("/bin/true", ["true"], {})
    elif check == "thread":
        import _thread
        _thread.start_new_thread(print, ())
    elif check == "read_etc_passwd":
        open("/etc/passwd").read()
    elif check == "list_root":
        os.listdir("/")
    elif check == "read_server_proc":
        open(f"/proc/{server_pid}/cmdline").read()
    elif check == "write_file":
        os.open("/tmp/cogolf-doctor-probe", os.O_WRONLY | os.O_CREAT)
    elif check == "signal_server":
        os.kill(server_pid, 0)
    elif check == "signal_all":
        os.kill(-1, 0)
    elif check == "network":
        return os.listdir("/sys/class/net")
    return "not held"
'''


TRUE_WHEN_HELD = frozenset({"uid", "pid_namespace", "private_root"})


@dataclass(frozen=True)
class Check:
    name: str
    wall: str  # the kernel mechanism expected to stop it


CHECKS = (
    Check("uid", "setresuid to a leased unprivileged uid"),
    Check("pid_namespace", "own PID namespace: pid 1, no parent in sight"),
    Check("private_root", "pivot_root into an empty read-only tmpfs"),
    Check("stat_host_file", "private root (Landlock does not cover stat)"),
    Check("stat_server_proc", "private root (no /proc), PID namespace"),
    Check("fork", "seccomp, RLIMIT_NPROC, pids cgroup"),
    Check("posix_spawn", "seccomp, RLIMIT_NPROC, pids cgroup"),
    Check("thread", "seccomp, pids cgroup"),
    Check("read_etc_passwd", "private root, Landlock"),
    Check("list_root", "Landlock (the root is empty anyway)"),
    Check("read_server_proc", "private root, PID namespace, Landlock, non-dumpable uid"),
    Check("write_file", "private read-only root, Landlock, RLIMIT_FSIZE"),
    Check("signal_server", "seccomp, Landlock signal scope, uid"),
    Check("signal_all", "seccomp, Landlock signal scope, uid"),
    Check("network", "private root here; the empty network namespace is listed above"),
)


async def examine(sb: BaseSandbox) -> dict[str, Any]:
    """Run the probes; each check is held when the probe call did not return normally
    (or, for `TRUE_WHEN_HELD`, returned true)."""
    calls = [[c.name, os.getpid()] for c in CHECKS]
    result = await sb.diagnose(PROBE, calls)
    checks = []
    for check, res in zip(CHECKS, result.results, strict=False):
        if check.name in TRUE_WHEN_HELD:
            held = res.status is CallStatus.OK and res.value is True
        else:
            held = res.status is not CallStatus.OK
        outcome = res.detail or (repr(res.value) if res.status is CallStatus.OK else "")
        checks.append({"check": check.name, "held": held, "wall": check.wall,
                       "outcome": f"{res.status.value} {outcome}".strip()})
    if os.path.exists("/tmp/cogolf-doctor-probe"):
        checks.append({"check": "no_file_left", "held": False, "wall": "Landlock",
                       "outcome": "probe file exists"})
    return {"load": result.load.value, "load_detail": result.load_detail, "checks": checks}
