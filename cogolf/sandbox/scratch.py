"""A scratch folder with a size limit: a tmpfs in its owner's own mount namespace.

A folder on disk takes whatever a program writes into it (a bot once wrote 1.5 GB).
A tmpfs of a fixed size refuses the write past it with ENOSPC, and mounted in a
mount namespace of the supervisor's own (`kernel.private_mount_namespace`), which
the program it starts inherits, it is seen by no one else and gone with the last
process of those namespaces, whoever ends them.

Its pages are memory: the kernel charges them to the memory cgroup of the process
that wrote them, so what a program keeps in its scratch counts against its own
memory limit (a full 256 MiB scratch leaves a bot 768 MiB of its 1 GiB), and stays
charged there until the folder is unmounted. Unmount it before the uid is leased
again (`close`); a supervisor killed first takes its namespace, and with it the
mount, along when it dies.
"""

from __future__ import annotations

import os

from cogolf.sandbox import kernel


class SizedScratch:
    """An empty tmpfs of `size_bytes` on `path` (an existing empty folder), owned by `uid`."""

    def __init__(self, path: str, size_bytes: int, uid: int) -> None:
        self.path, self.size_bytes = path, size_bytes
        kernel.mount_tmpfs(path, size_bytes, uid)
        # A descriptor of the mount itself: it is checked by that, whatever the path
        # comes to name (the program owns the folder's contents, not the mount point).
        self._fd: int | None = os.open(path, os.O_PATH | os.O_DIRECTORY | os.O_CLOEXEC)

    def full(self) -> bool:
        """Whether not one more page fits: the next write that needs one fails."""
        if self._fd is None:
            return False
        st = os.fstatvfs(self._fd)
        return st.f_bavail == 0

    def close(self) -> None:
        """Unmount (its pages are freed once no process holds a file of it open)."""
        if self._fd is None:
            return
        os.close(self._fd)
        self._fd = None
        kernel.unmount(self.path)
