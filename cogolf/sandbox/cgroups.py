"""cgroups, one per leased uid: v1 pids, memory and cpuacct, and a group to kill by.

A group caps how many tasks a program may have (so no fork or thread, for root
or not), how much memory it may charge, and accounts CPU over a whole process
tree. Groups live below the server's own group in each hierarchy, named after the
uid whose lease makes them exclusive, and are reused batch after batch.

Ending a run means ending its whole tree, daemons that called `setsid` included:
a group in the unified (v2) hierarchy is killed by one write to `cgroup.kill`,
which the kernel applies to every task at once, forks racing it included. Without
one, the v1 freezer stops the tree while every task is sent SIGKILL; without that,
the tasks are signalled round after round until none is left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from dataclasses import dataclass

CGROUP_ROOT = "/sys/fs/cgroup"
UNIFIED = "unified"
"""The v2 hierarchy, as a name among the controllers: no controller, only `cgroup.kill`."""
FREEZER = "freezer"
CONTROLLERS = ("pids", "memory", "cpuacct", UNIFIED)
"""What external programs and bots join; the freezer stands in where no v2 group is."""
SANDBOX_PREFIX, EXTERNAL_PREFIX, BOT_PREFIX, AGENT_PREFIX = "py", "ext", "bot", "agent"
PREFIXES = (SANDBOX_PREFIX, EXTERNAL_PREFIX, BOT_PREFIX, AGENT_PREFIX)
"""Every user of groups names them `<prefix><uid>`; a sweep of a uid looks at each."""
_FREEZE_SECONDS = 0.5  # a tree that does not freeze in this time is killed unfrozen
END_SECONDS = 2.0
"""How long ending a uid's groups waits for its last task to be gone before giving up."""
_END_POLL = 0.002


def _own_path(controller: str) -> str | None:
    try:
        with open("/proc/self/cgroup", encoding="ascii") as fh:
            for line in fh:
                ident, names, path = line.rstrip("\n").split(":", 2)
                if controller == UNIFIED and ident == "0" and not names:
                    return path
                if controller in names.split(","):
                    return path
    except OSError:
        return None
    return None


def _mount(controller: str) -> str:
    if controller == UNIFIED and os.path.exists(os.path.join(CGROUP_ROOT, "cgroup.controllers")):
        return CGROUP_ROOT  # a v2-only machine: the one hierarchy is the root
    return os.path.join(CGROUP_ROOT, controller)


def controller_base(controller: str) -> str | None:
    """Where this server may create its groups for `controller`, or None."""
    mount = _mount(controller)
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


def _signal_all(pids: list[int]) -> None:
    for pid in pids:
        with contextlib.suppress(OSError):
            os.kill(pid, signal.SIGKILL)


_seen_ended: set[int] = set()
"""Uids whose groups `end` saw empty in this process since their lease began."""


def seen_ended(uid: int) -> bool:
    """Whether this process saw the groups of `uid` end since its lease began: its
    lease's end then needs no check of its own (what other users of groups left was
    swept before the lease began)."""
    return uid in _seen_ended


def forget_ended(uid: int) -> None:
    """A lease of `uid` begins: nothing of it was seen ended yet."""
    _seen_ended.discard(uid)


@dataclass(frozen=True)
class UidGroups:
    """The groups of one leased uid; `dirs` are what a child joins."""

    dirs: dict[str, str]
    uid: int | None = None

    @classmethod
    def create(cls, uid: int, bases: dict[str, str], prefix: str) -> UidGroups:
        """The groups named `prefix<uid>`; each user of groups has its own prefix."""
        dirs = {}
        for controller, base in bases.items():
            path = os.path.join(base, f"{prefix}{uid}")
            try:
                os.makedirs(path, exist_ok=True)
            except OSError:
                continue
            dirs[controller] = path
        return cls(dirs, uid)

    @classmethod
    def existing(cls, uid: int, bases: dict[str, str], prefix: str) -> UidGroups:
        """The groups `create` would make, only those that exist (nothing is made)."""
        dirs = {}
        for controller, base in bases.items():
            path = os.path.join(base, f"{prefix}{uid}")
            if os.path.isdir(path):
                dirs[controller] = path
        return cls(dirs, uid)

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
        """SIGKILL every task in the groups, at once where the kernel can; returns how
        many tasks there were."""
        victims = self.pids()
        if not victims:
            return 0
        if UNIFIED in self.dirs and _write(os.path.join(self.dirs[UNIFIED], "cgroup.kill"), "1"):
            # and what is in the other groups alone (joined by an older version of us)
            _signal_all(victims)
        elif FREEZER in self.dirs:
            self._kill_frozen()
        else:
            _signal_all(self.pids())
        return len(victims)

    def _kill_frozen(self) -> None:
        """Freeze the tree, so none of it can fork meanwhile, signal it, thaw it."""
        state = os.path.join(self.dirs[FREEZER], "freezer.state")
        if not _write(state, "FROZEN"):
            _signal_all(self.pids())
            return
        try:
            give_up = time.monotonic() + _FREEZE_SECONDS
            while _read(state).strip() != "FROZEN" and time.monotonic() < give_up:
                time.sleep(0.001)
            _signal_all(self.pids())
        finally:
            _write(state, "THAWED")  # a frozen task dies of its SIGKILL only once thawed

    def empty(self, *, reaped: bool = False) -> bool:
        """No task is running; with `reaped`, none is left to reap either (a zombie
        keeps its place in the pids count, and in its uid's RLIMIT_NPROC, until then)."""
        if reaped:
            charged = self.charged_tasks()
            if charged is not None:
                return charged == 0
        return not self.pids()

    def end_blocking(self, timeout: float = END_SECONDS, *, reaped: bool = False) -> bool:
        """Kill every task until none is left (see `empty`); False if some still are
        after `timeout`."""
        give_up = time.monotonic() + timeout
        while not self.empty(reaped=reaped):
            if time.monotonic() >= give_up:
                return False
            self.kill_all()
            time.sleep(_END_POLL)
        return self._ended()

    async def end(self, timeout: float = END_SECONDS, *, reaped: bool = False) -> bool:
        """`end_blocking` that waits on the event loop."""
        give_up = time.monotonic() + timeout
        while not self.empty(reaped=reaped):
            if time.monotonic() >= give_up:
                return False
            self.kill_all()
            await asyncio.sleep(_END_POLL)
        return self._ended()

    def _ended(self) -> bool:
        if self.uid is not None and self.dirs:
            _seen_ended.add(self.uid)
        return True

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
    """The bases of `controllers` this machine has; the freezer stands in for a v2
    group where there is none (or the kernel has no `cgroup.kill`, before 5.14)."""
    bases = {}
    for controller in controllers:
        base = controller_base(controller)
        if controller == UNIFIED and (
                base is None or not os.path.exists(os.path.join(base, "cgroup.kill"))):
            controller, base = FREEZER, controller_base(FREEZER)
        if base is not None:
            bases[controller] = base
    return bases
