"""Ending everything a leased uid still runs, so the uid is leased again empty.

A lease's holder ends its run's groups itself, and its lease ends by checking them
(`uids.lease_uid`), but a holder can be killed first (SIGKILL, a crash, the OOM
killer): the kernel then drops its lock and what it started runs on. So a uid
whose last holder did not see it empty is swept before it is leased again: every
group of it, of every user of groups (`cgroups.PREFIXES`), is killed until empty,
and so is every process still running as the uid according to /proc, the net for
a machine without cgroups and for groups made under another base than ours.
"""

from __future__ import annotations

import contextlib
import functools
import os
import signal
import time

from cogolf.sandbox.cgroups import (
    CONTROLLERS,
    END_SECONDS,
    FREEZER,
    PREFIXES,
    UidGroups,
    available_bases,
    controller_base,
)

_POLL = 0.002


@functools.cache
def _bases() -> tuple[tuple[str, str], ...]:
    """Every hierarchy our groups may be in (the freezer beside a v2 group: another
    server may have had no v2 group); fixed for the life of the process."""
    bases = available_bases(CONTROLLERS)
    freezer = controller_base(FREEZER)
    if freezer is not None:
        bases[FREEZER] = freezer
    return tuple(bases.items())


@functools.cache
def _check_bases() -> tuple[tuple[str, str], ...]:
    """Where a uid is checked cheaply at the end of a lease: every task of ours is in
    the pids hierarchy, so its groups alone say whether anything of the uid runs."""
    pids = dict(_bases()).get("pids")
    return (("pids", pids),) if pids is not None else _bases()


def _groups(uid: int, bases: tuple[tuple[str, str], ...]) -> list[UidGroups]:
    found = [UidGroups.existing(uid, dict(bases), prefix) for prefix in PREFIXES]
    return [g for g in found if g.dirs]


def _running_uids(pid: str) -> tuple[int, ...]:
    """The uids of a running process (none for a zombie: it runs nothing and is its
    parent's, or init's, to reap)."""
    uids: tuple[int, ...] = ()
    try:
        with open(f"/proc/{pid}/status", "rb") as fh:
            for line in fh:
                if line.startswith(b"State:") and line.split()[1:2] == [b"Z"]:
                    return ()
                if line.startswith(b"Uid:"):
                    uids = tuple(int(x) for x in line.split()[1:])
                    break
    except (OSError, ValueError):
        return ()
    return uids


def uid_processes(uids: set[int]) -> dict[int, list[int]]:
    """The running processes having one of `uids` as any of their uids, by uid, from
    one pass over /proc."""
    out: dict[int, list[int]] = {}
    with contextlib.suppress(OSError):
        for name in os.listdir("/proc"):
            if name.isdigit():
                for uid in uids.intersection(_running_uids(name)):
                    out.setdefault(uid, []).append(int(name))
    return out


def _count(path: str) -> int:
    """A pids.current (0 for a group that does not exist)."""
    try:
        fd = os.open(path, os.O_RDONLY | os.O_CLOEXEC)
    except FileNotFoundError:
        return 0
    try:
        return int(os.read(fd, 32) or b"0")
    except (OSError, ValueError):
        return -1
    finally:
        os.close(fd)


def is_empty(uid: int) -> bool:
    """Whether nothing of `uid` runs, by its groups where there are any, else /proc.

    Every lease ends with this, so its usual answer costs a read per user of groups:
    no task at all in its pids groups, zombies included. Only otherwise are the
    running tasks looked for (a zombie init has not reaped yet runs nothing)."""
    if not _bases():
        return not uid_processes({uid})
    pids = _check_bases()[0][1] if _check_bases()[0][0] == "pids" else None
    if pids is not None and all(
            _count(os.path.join(pids, f"{prefix}{uid}", "pids.current")) == 0
            for prefix in PREFIXES):
        return True
    return all(g.empty() for g in _groups(uid, _check_bases()))


def sweep(uids: set[int], timeout: float = END_SECONDS) -> set[int]:
    """Kill every group and process of `uids` until none runs; returns the uids with
    something still running after `timeout` (a task stuck in the kernel)."""
    give_up = time.monotonic() + timeout
    groups = {uid: _groups(uid, _bases()) for uid in uids}
    while True:
        left: set[int] = set()
        for uid, found in groups.items():
            for group in found:
                if not group.empty():
                    group.kill_all()
                    left.add(uid)
        for uid, pids in uid_processes(set(uids)).items():
            left.add(uid)
            for pid in pids:
                with contextlib.suppress(OSError):
                    os.kill(pid, signal.SIGKILL)
        if not left or time.monotonic() >= give_up:
            return left
        time.sleep(_POLL)
