"""Leasing a distinct unprivileged uid to each program that runs at the same time.

Separate uids are what stop one running program from signalling, tracing or
reading another. The lease is an exclusive `flock` on a per-uid file, so it holds
across every server process on the machine and is released by the kernel if the
holder dies.
"""

from __future__ import annotations

import contextlib
import fcntl
import os
import tempfile
from collections.abc import Iterator

UID_BASE = 1_610_000
"""First uid of the pool; far above any account a distribution creates."""
UID_COUNT = 1024
DEFAULT_LOCK_DIR = "/run/cogolf/uids"


class NoFreeUid(RuntimeError):
    pass


def lock_dir() -> str:
    if os.geteuid() == 0 and os.path.isdir("/run"):
        return DEFAULT_LOCK_DIR
    return os.path.join(tempfile.gettempdir(), f"cogolf-uids-{os.getuid()}")


@contextlib.contextmanager
def lease_uid(*, directory: str | None = None) -> Iterator[int]:
    """Yield a uid no other lease holds until the block exits.

    Without root there is nothing to drop to, and the current uid is yielded.
    """
    if os.geteuid() != 0:
        yield os.getuid()
        return
    where = directory or lock_dir()
    os.makedirs(where, mode=0o700, exist_ok=True)
    # Lowest free uid first: few distinct uids in use means their cgroups already
    # exist and are configured, which keeps a batch's set-up cheap.
    for i in range(UID_COUNT):
        uid = UID_BASE + i
        fd = os.open(os.path.join(where, str(uid)), os.O_RDWR | os.O_CREAT | os.O_CLOEXEC, 0o600)
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            os.close(fd)
            continue
        try:
            yield uid
        finally:
            os.close(fd)  # closing drops the lock
        return
    raise NoFreeUid(f"all {UID_COUNT} sandbox uids are leased")
