"""Leasing a distinct unprivileged uid to each program that runs at the same time.

Separate uids are what stop one running program from signalling, tracing or
reading another. The lease is an exclusive `flock` on a per-uid file, so it holds
across every server process on the machine and is released by the kernel if the
holder dies.

A uid is handed out only with nothing of it left running. The lease file's first
byte says whether its last holder saw the uid empty when it let go (`CLEAN`): a
lease ends by killing what is left of the uid and waiting until it is gone (at
most `END_SECONDS`; nothing to do when its holder saw its own groups end, as
every holder does), and marks the file clean only then. A holder that was killed
first leaves it marked in use, and the next lease of that uid sweeps it
(`sweep.sweep`) before handing it out, spending at most `SWEEP_SECONDS` on
sweeping in all; a uid it could not empty stays marked and is passed over (for
`STUCK_SECONDS` without another try, so leases stay cheap meanwhile). The
first lease of each process also sweeps every unleased uid left unclean, so a
uid nobody leases soon is not left running until it is.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
import time
from collections.abc import Iterator

import structlog

from cogolf.sandbox import sweep
from cogolf.sandbox.cgroups import END_SECONDS, forget_ended, seen_ended

UID_BASE = 1_610_000
"""First uid of the pool; far above any account a distribution creates."""
UID_COUNT = 1024
DEFAULT_LOCK_DIR = "/run/cogolf/uids"
CLEAN, IN_USE = b"c", b"u"  # a lease file's first byte
SWEEP_SECONDS = 2.0
"""The most one lease spends sweeping uids left unclean before it hands one out."""
STUCK_SECONDS = 60.0
"""A uid a sweep could not empty is passed over unswept this long (by this process)."""

log = structlog.get_logger(__name__)
_swept_dirs: set[str] = set()  # lock folders this process has swept at its first lease
_stuck: dict[int, float] = {}  # uid -> until when it is passed over without a sweep
# (lock folder, uid) leased by this process now: skipped without a look at its file,
# so a lease costs a few system calls however many children are running or ready.
_held: set[tuple[str, int]] = set()
# Per lock folder, the uids this process let go of clean, most recent last: tried
# first, since no one else is likely to have taken them (a scan from the lowest uid
# may step over many that other servers on the machine hold).
_released: dict[str, list[int]] = {}
_RELEASED_KEPT = 64


class NoFreeUid(RuntimeError):
    pass


def lock_dir() -> str:
    if os.geteuid() == 0 and os.path.isdir("/run"):
        return DEFAULT_LOCK_DIR
    return os.path.join(tempfile.gettempdir(), f"cogolf-uids-{os.getuid()}")


def _open(where: str, uid: int) -> int:
    return os.open(os.path.join(where, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)


def _try_lock(fd: int) -> bool:
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        return False
    return True


def _clean(fd: int) -> bool:
    return os.pread(fd, 1, 0) == CLEAN


def _mark(fd: int, state: bytes) -> None:
    os.pwrite(fd, state, 0)


def _sweep_into(fds: dict[int, int], timeout: float) -> set[int]:
    """Sweep the uids (to their locked lease files) left unclean, marking each clean
    once empty; returns those still running something after `timeout`."""
    now = time.monotonic()
    todo = {uid for uid in fds if _stuck.get(uid, 0.0) <= now}
    stuck = (sweep.sweep(todo, timeout) if timeout > 0 else todo) | (set(fds) - todo)
    for uid, fd in fds.items():
        if uid not in stuck:
            _stuck.pop(uid, None)
            _mark(fd, CLEAN)
        elif uid in todo:
            _stuck[uid] = now + STUCK_SECONDS
            log.warning("a uid still runs something after a sweep: not leased", uid=uid)
    return stuck


def sweep_unleased(*, directory: str | None = None, timeout: float = SWEEP_SECONDS) -> list[int]:
    """Sweep every uid that no one leases and whose last holder left it unclean;
    returns the uids found so (swept, or still running after `timeout`)."""
    if os.geteuid() != 0:
        return []
    where = directory or lock_dir()
    fds: dict[int, int] = {}
    try:
        with contextlib.suppress(FileNotFoundError):
            for name in os.listdir(where):
                if not name.isdigit() or not UID_BASE <= int(name) < UID_BASE + UID_COUNT:
                    continue
                fd = _open(where, int(name))
                if _try_lock(fd) and not _clean(fd):
                    fds[int(name)] = fd
                else:
                    os.close(fd)
        if fds:
            _sweep_into(fds, timeout)
    finally:
        for fd in fds.values():
            os.close(fd)
    return sorted(fds)


def _candidates(where: str) -> Iterator[int]:
    """The uids a lease tries, in order: those this process let go of lately, then
    the lowest first (few distinct uids in use means their cgroups already exist and
    are configured, which keeps a batch's set-up cheap)."""
    recent = list(reversed(_released.get(where, [])))
    yield from recent
    tried = set(recent)
    for uid in range(UID_BASE, UID_BASE + UID_COUNT):
        if uid not in tried:
            yield uid


def _remember_released(where: str, uid: int) -> None:
    released = _released.setdefault(where, [])
    if uid in released:
        released.remove(uid)
    released.append(uid)
    del released[:-_RELEASED_KEPT]


@contextlib.contextmanager
def lease_uid(*, directory: str | None = None) -> Iterator[int]:
    """Yield a uid no other lease holds, with nothing of it running, until the block
    exits; the block's end kills whatever of the uid is left (see the module).

    Without root there is nothing to drop to, and the current uid is yielded.
    """
    if os.geteuid() != 0:
        yield os.getuid()
        return
    where = directory or lock_dir()
    os.makedirs(where, mode=0o700, exist_ok=True)
    if where not in _swept_dirs:
        _swept_dirs.add(where)
        sweep_unleased(directory=where)
    give_up = time.monotonic() + SWEEP_SECONDS
    for uid in _candidates(where):
        if (where, uid) in _held:
            continue
        fd = _open(where, uid)
        if _try_lock(fd) and (
                _clean(fd) or not _sweep_into({uid: fd}, give_up - time.monotonic())):
            break
        os.close(fd)
    else:
        raise NoFreeUid(f"all {UID_COUNT} sandbox uids are leased or still run something")
    _mark(fd, IN_USE)  # stays so if this process dies holding the lease
    forget_ended(uid)
    _held.add((where, uid))
    try:
        yield uid
    finally:
        _held.discard((where, uid))
        try:
            if seen_ended(uid) or sweep.is_empty(uid) or not sweep.sweep({uid}, END_SECONDS):
                _mark(fd, CLEAN)
                _remember_released(where, uid)
            else:
                log.warning("a uid still runs something after its lease", uid=uid)
        finally:
            os.close(fd)  # closing drops the lock
