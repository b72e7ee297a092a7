"""cgroup v1 groups, one per leased uid, for the pids, memory and cpuacct controllers.

A group caps how many tasks a program may have (so no fork or thread, for root
or not), how much memory it may charge, and accounts CPU over a whole process
tree. Groups live below the server's own group in each hierarchy, named after the
uid whose lease makes them exclusive, and are reused batch after batch.
"""

from __future__ import annotations

import contextlib
import os
import signal
from dataclasses import dataclass

CGROUP_ROOT = "/sys/fs/cgroup"
CONTROLLERS = ("pids", "memory", "cpuacct")


def _own_path(controller: str) -> str | None:
    try:
        with open("/proc/self/cgroup", encoding="ascii") as fh:
            for line in fh:
                _, names, path = line.rstrip("\n").split(":", 2)
                if controller in names.split(","):
                    return path
    except OSError:
        return None
    return None


def controller_base(controller: str) -> str | None:
    """Where this server may create its groups for `controller`, or None."""
    mount = os.path.join(CGROUP_ROOT, controller)
    own = _own_path(controller)
    if own is None or not os.path.exists(os.path.join(mount, "cgroup.procs")):
        return None
    base = os.path.join(mount, own.lstrip("/"), "cogolf")
    try:
        os.makedirs(base, exist_ok=True)
    except OSError:
        return None
    return base


def _write(path: str, value: str) -> bool:
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CLOEXEC)
    except OSError:
        return False
    try:
        os.write(fd, value.encode())
        return True
    except OSError:
        return False
    finally:
        os.close(fd)


def _read(path: str) -> str:
    try:
        with open(path, encoding="ascii") as fh:
            return fh.read()
    except OSError:
        return ""


@dataclass(frozen=True)
class UidGroups:
    """The groups of one leased uid; `dirs` are what a child joins."""

    dirs: dict[str, str]

    @classmethod
    def create(cls, uid: int, bases: dict[str, str], prefix: str = "u") -> UidGroups:
        """The groups named `prefix<uid>`; each user of groups has its own prefix."""
        dirs = {}
        for controller, base in bases.items():
            path = os.path.join(base, f"{prefix}{uid}")
            try:
                os.makedirs(path, exist_ok=True)
            except OSError:
                continue
            dirs[controller] = path
        return cls(dirs)

    def configure(self, *, max_tasks: int, memory_bytes: int | None) -> None:
        if "pids" in self.dirs:
            _write(os.path.join(self.dirs["pids"], "pids.max"), str(max_tasks))
        if "memory" in self.dirs and memory_bytes is not None:
            mem = self.dirs["memory"]
            limit = str(memory_bytes)
            # memsw must stay >= the memory limit; the order that works depends on direction.
            _write(os.path.join(mem, "memory.limit_in_bytes"), limit)
            _write(os.path.join(mem, "memory.memsw.limit_in_bytes"), limit)
            _write(os.path.join(mem, "memory.limit_in_bytes"), limit)

    def configured(self, *, max_tasks: int, memory_bytes: int | None) -> bool:
        """Whether the limits `configure` would write are already in force."""
        if "pids" in self.dirs and \
                _read(os.path.join(self.dirs["pids"], "pids.max")).strip() != str(max_tasks):
            return False
        if "memory" in self.dirs and memory_bytes is not None:
            mem = self.dirs["memory"]
            for name in ("memory.limit_in_bytes", "memory.memsw.limit_in_bytes"):
                if _read(os.path.join(mem, name)).strip() != str(memory_bytes):
                    return False
        return True

    def join_paths(self) -> list[str]:
        return list(self.dirs.values())

    def pids(self) -> list[int]:
        out: set[int] = set()
        # every task is in the pids group when there is one, so one read suffices
        paths = [self.dirs["pids"]] if "pids" in self.dirs else list(self.dirs.values())
        for path in paths:
            for word in _read(os.path.join(path, "cgroup.procs")).split():
                with contextlib.suppress(ValueError):
                    out.add(int(word))
        return sorted(out)

    def kill_all(self) -> int:
        """SIGKILL every task in the groups; returns how many were signalled."""
        victims = self.pids()
        for pid in victims:
            with contextlib.suppress(OSError):
                os.kill(pid, signal.SIGKILL)
        return len(victims)

    def charged_tasks(self) -> int | None:
        """Tasks the pids controller still counts, zombies included (None: no pids group).

        A zombie has left `cgroup.procs` but keeps its uid's process count until it
        is reaped, so this, not `pids()`, says whether a uid is free of a past run.
        """
        if "pids" not in self.dirs:
            return None
        text = _read(os.path.join(self.dirs["pids"], "pids.current")).strip()
        return int(text) if text.isdigit() else None

    def memory_failures(self) -> int:
        text = _read(os.path.join(self.dirs.get("memory", "/nonexistent"), "memory.failcnt"))
        return int(text) if text.strip().isdigit() else 0

    def reset_memory_failures(self) -> None:
        if "memory" in self.dirs:
            _write(os.path.join(self.dirs["memory"], "memory.failcnt"), "0")

    def cpu_seconds(self) -> float | None:
        text = _read(os.path.join(self.dirs.get("cpuacct", "/nonexistent"), "cpuacct.usage"))
        return int(text) / 1e9 if text.strip().isdigit() else None


def available_bases(controllers: tuple[str, ...] = CONTROLLERS) -> dict[str, str]:
    bases = {}
    for controller in controllers:
        base = controller_base(controller)
        if base is not None:
            bases[controller] = base
    return bases
