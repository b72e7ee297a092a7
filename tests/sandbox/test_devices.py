"""Devices behind the walls: pseudo-terminals (`WallSpec.terminals`), which a run may
make and drive a program through, never opening one it did not make; and /dev/null,
which every run may write."""

from __future__ import annotations

import asyncio
import os
from pathlib import Path

from cogolf.sandbox.walls import ExternalRun, WallSpec, run_external

PYTHON = "/usr/bin/python3.11"

DRIVE = r"""
import os, pty
pid, fd = pty.fork()
if pid == 0:
    os.execv("/bin/sh", ["sh", "-c", "test -t 0 && echo hello from a terminal"])
out = b""
while True:
    try:
        chunk = os.read(fd, 1024)
    except OSError:
        break
    if not chunk:
        break
    out += chunk
os.waitpid(pid, 0)
print(out.decode().strip())
"""

OTHERS = r"""
import fcntl, os, sys, termios
def attempt(fn):
    try:
        fn()
        return "reached"
    except OSError as e:
        return type(e).__name__
print(attempt(lambda: os.open(sys.argv[1], os.O_RDWR)))
master, slave = os.openpty()
print(attempt(lambda: fcntl.ioctl(slave, termios.TIOCSTI, b"x")))
"""


def _run(source: str, args: list[str], cwd: Path, terminals: bool) -> ExternalRun:
    spec = WallSpec(terminals=terminals, max_processes=4)
    return asyncio.run(run_external([PYTHON, "-I", "-S", "-c", source, *args], cwd=str(cwd),
                                    spec=spec, cpu_seconds=10, wall_seconds=30))


def test_a_program_is_driven_through_a_terminal_only_where_granted(
    tmp_path: Path, needs_root: None
) -> None:
    run = _run(DRIVE, [], tmp_path, terminals=True)
    assert run.returncode == 0 and run.stdout == b"hello from a terminal\n", run
    refused = _run(DRIVE, [], tmp_path, terminals=False)
    assert refused.returncode != 0 and b"out of pty devices" in refused.stderr, refused


def test_no_terminal_of_another_uid_opens_and_none_can_be_typed_into(
    tmp_path: Path, needs_root: None
) -> None:
    master, slave = os.openpty()  # the host's: root's terminal
    try:
        run = _run(OTHERS, [os.ttyname(slave)], tmp_path, terminals=True)
    finally:
        os.close(master)
        os.close(slave)
    assert run.returncode == 0, run
    assert run.stdout.split() == [b"PermissionError", b"PermissionError"], run


def test_dev_null_may_be_written_and_no_other_device(tmp_path: Path, needs_root: None) -> None:
    """Writing to /dev/null (truncating open included) reaches nothing; /dev/zero, also
    readable by every run, stays read-only."""
    source = (
        "def attempt(path):\n"
        "    try:\n"
        "        with open(path, 'w') as fh:\n"
        "            fh.write('gone')\n"
        "        return 'written'\n"
        "    except OSError as e:\n"
        "        return type(e).__name__\n"
        "print(attempt('/dev/null'), attempt('/dev/zero'))\n"
    )
    run = _run(source, [], tmp_path, terminals=False)
    assert run.returncode == 0 and run.stdout == b"written PermissionError\n", run
