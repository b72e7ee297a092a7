"""Finding the processes a test's hostile program left behind, by a token in their argv,
and interrupting a command the way a terminal does."""

from __future__ import annotations

import contextlib
import os
import signal
import subprocess
import time
import uuid
from collections.abc import Callable, Iterator, Sequence
from pathlib import Path


def token() -> str:
    """A number unique to one test, to put in a sleeper's argv (`sleep 3000.123456`)."""
    return f"3000.{uuid.uuid4().int % 10**9:09d}"


def cmdline(pid: int) -> list[bytes]:
    """The arguments of a process ([] once gone; a zombie has none)."""
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as fh:
            return fh.read().split(b"\0")[:-1]
    except OSError:
        return []


def sleepers(mark: str) -> list[int]:
    """Running `sleep` processes (not zombies) with `mark` as their argument."""
    return [int(name) for name in os.listdir("/proc") if name.isdigit()
            and (args := cmdline(int(name)))[:1] in ([b"sleep"], [b"/bin/sleep"])
            and args[1:2] == [mark.encode()]]


@contextlib.contextmanager
def in_session(argv: Sequence[str], cwd: Path) -> Iterator[subprocess.Popen[str]]:
    """`argv` in a session of its own (its process group is what a terminal signals);
    the group is killed if the block leaves it running."""
    proc = subprocess.Popen(list(argv), cwd=cwd, stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, start_new_session=True)
    try:
        yield proc
    finally:
        if proc.poll() is None:
            with contextlib.suppress(OSError):
                os.killpg(proc.pid, signal.SIGKILL)
        proc.wait()


def ctrl_c(proc: subprocess.Popen[str], timeout: float = 60) -> str:
    """SIGINT to its process group, as a terminal sends it; its stderr once it ended."""
    os.killpg(proc.pid, signal.SIGINT)
    return proc.communicate(timeout=timeout)[1]


def wait_until(check: Callable[[], bool], timeout: float, poll: float = 0.05) -> bool:
    give_up = time.monotonic() + timeout
    while not check():
        if time.monotonic() >= give_up:
            return False
        time.sleep(poll)
    return True
