"""What a leased uid can use outside its walls: an interpreter, this installation's
packages, the loopback of a network namespace of its own.

Walled bots and walled agents both run Python as an unprivileged uid in a network
namespace of their own; DAC still applies after the uid drop, so the interpreter and
the packages must be reachable by any uid, and a new namespace's `lo` starts down.
"""

from __future__ import annotations

import fcntl
import os
import socket
import stat
import struct
import sys
from pathlib import Path

_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


class BotSetupError(RuntimeError):
    """The machine cannot run a walled bot (e.g. no interpreter other uids can run)."""


def _other_can(path: str, bits: int) -> bool:
    """Whether a uid with no group in common may reach `path` with `bits` (S_IROTH...)."""
    path = os.path.realpath(path)
    parts = Path(path).parents
    try:
        if any(not os.stat(p).st_mode & stat.S_IXOTH for p in parts):
            return False
        return bool(os.stat(path).st_mode & bits)
    except OSError:
        return False


def readable_by_bots(path: str) -> bool:
    return _other_can(path, stat.S_IROTH | (stat.S_IXOTH if os.path.isdir(path) else 0))


def bot_python() -> str:
    """An interpreter binary another uid can execute: the server's own, else the system's."""
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    candidates = [getattr(sys, "_base_executable", ""), sys.executable, f"/usr/bin/python{version}"]
    for cand in candidates:
        if cand and os.path.isfile(cand) and _other_can(cand, stat.S_IXOTH):
            return os.path.realpath(cand)
    raise BotSetupError(f"no Python {version} that a bot's uid can execute among {candidates}")


def import_path() -> tuple[str, ...]:
    """This installation's package folder and site-packages, which every bot may read.

    Only the `cogolf` package is granted, not the folder holding it (which may hold the
    hidden references of the pack): a bot imports it through a link in its scratch
    folder. They must be readable by other uids; a virtualenv under a private home is
    not, and the night stops with the reason rather than voiding every policy match."""
    import site

    import cogolf

    package = os.path.dirname(os.path.abspath(cogolf.__file__))
    paths = [package, *(p for p in site.getsitepackages() if os.path.isdir(p))]
    for p in paths:
        if not _other_can(p, stat.S_IROTH | stat.S_IXOTH):
            raise BotSetupError(
                f"{p} is not readable by other users, so a walled bot cannot import "
                "the bot client from it: install the project where every user can read it"
            )
    return tuple(dict.fromkeys(paths))


def loopback_up() -> None:
    """Bring `lo` up in the new network namespace (it starts down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))
