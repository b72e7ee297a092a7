"""Loopback-only runs (`WallSpec.loopback`): a test suite's local servers work inside
the walls, and nothing of the host's network is reachable from them.

Each program runs as a leased uid behind every wall, in a network namespace of its
own; it prints one JSON line of what it could and could not do.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
import socket
import tempfile
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cogolf.sandbox import kernel
from cogolf.sandbox.walls import ExternalRun, WallSpec, run_external

PYTHON = "/usr/bin/python3.11"

INSIDE = r"""
import json, socket, sys, threading
out = {}
srv = socket.create_server(("127.0.0.1", 0))
port = srv.getsockname()[1]
def serve():
    conn, _ = srv.accept()
    conn.sendall(conn.recv(64).upper())
    conn.close()
threading.Thread(target=serve).start()
with socket.create_connection(("localhost", port), timeout=5) as c:
    c.sendall(b"ping")
    out["tcp"] = c.recv(64).decode()
six = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
six.bind(("::1", 0))
udp6 = socket.socket(socket.AF_INET6, socket.SOCK_DGRAM)
udp6.sendto(b"dgram", ("::1", six.getsockname()[1]))
out["udp6"] = six.recv(64).decode()
def attempt(name, fn):
    try:
        fn()
        out[name] = "reached"
    except OSError as e:
        out[name] = type(e).__name__
host_port = int(sys.argv[1])
attempt("host_tcp", lambda: socket.create_connection(("127.0.0.1", host_port), timeout=2))
def unix():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(sys.argv[2])
attempt("host_unix", unix)
attempt("netlink", lambda: socket.socket(socket.AF_NETLINK, socket.SOCK_RAW, 0))
attempt("packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW, 0))
attempt("outside", lambda: socket.create_connection(("192.0.2.1", 80), timeout=2))
print(json.dumps(out))
"""


@pytest.fixture
def host_servers() -> Iterator[tuple[int, str, list[bytes]]]:
    """A TCP server on the host's 127.0.0.1 and a unix socket any uid may connect to,
    each recording what reaches it."""
    reached: list[bytes] = []
    tcp = socket.create_server(("127.0.0.1", 0))
    # in a folder every uid can reach (pytest's own tmp_path is private to root)
    folder = Path(tempfile.mkdtemp(prefix="cogolf-open-", dir="/tmp"))
    os.chmod(folder, 0o777)
    path = str(folder / "host.sock")
    unix = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    unix.bind(path)
    os.chmod(path, 0o777)
    unix.listen()
    stop = threading.Event()

    def accept(srv: socket.socket) -> None:
        srv.settimeout(0.2)
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except TimeoutError:
                continue
            reached.append(b"connected")
            conn.close()

    threads = [threading.Thread(target=accept, args=(s,)) for s in (tcp, unix)]
    for t in threads:
        t.start()
    try:
        yield tcp.getsockname()[1], path, reached
    finally:
        stop.set()
        for t in threads:
            t.join()
        tcp.close()
        unix.close()
        shutil.rmtree(folder)


def _run(source: str, args: list[str], cwd: Path, spec: WallSpec) -> ExternalRun:
    return asyncio.run(run_external([PYTHON, "-I", "-S", "-c", source, *args], cwd=str(cwd),
                                    spec=spec, cpu_seconds=10, wall_seconds=30))


def _report(run: ExternalRun) -> dict[str, Any]:
    assert run.returncode == 0, run
    return dict(json.loads(run.stdout))


def test_loopback_works_inside_and_reaches_nothing_of_the_host(
    tmp_path: Path, needs_root: None, host_servers: tuple[int, str, list[bytes]]
) -> None:
    port, path, reached = host_servers
    spec = WallSpec(loopback=True, max_processes=4, readable=(str(Path(path).parent),))
    got = _report(_run(INSIDE, [str(port), path], tmp_path, spec))
    assert got["tcp"] == "PING" and got["udp6"] == "dgram"
    # the host's port is closed in the run's own namespace; the socket file is granted
    # by Landlock and by its mode, but no unix socket can be made
    assert got["host_tcp"] == "ConnectionRefusedError"
    assert got["host_unix"] == "PermissionError"
    assert got["netlink"] == got["packet"] == "PermissionError"
    assert got["outside"] == "OSError"  # no route: `lo` is the namespace's only interface
    assert reached == []


def test_without_loopback_no_socket_can_be_made(tmp_path: Path, needs_root: None) -> None:
    source = ("import socket\ntry:\n    socket.socket()\n    print('made')\n"
              "except OSError as e:\n    print(type(e).__name__)\n")
    run = _run(source, [], tmp_path, WallSpec())
    assert run.returncode == 0 and run.stdout == b"PermissionError\n", run
    inside = _run(source, [], tmp_path, WallSpec(loopback=True))
    assert inside.returncode == 0 and inside.stdout == b"made\n", inside


def test_concurrent_runs_have_a_loopback_each(tmp_path: Path, needs_root: None) -> None:
    """Two runs at once bind the same port: each has its own `lo`, so neither sees the
    other (a candidate's suite cannot reach another's servers)."""
    source = ("import socket, time\ns = socket.create_server(('127.0.0.1', 47613))\n"
              "time.sleep(1)\nprint('bound')\n")

    async def both() -> list[ExternalRun]:
        return list(await asyncio.gather(*(
            run_external([PYTHON, "-I", "-S", "-c", source], cwd=str(tmp_path),
                         spec=WallSpec(loopback=True), cpu_seconds=10, wall_seconds=30)
            for _ in range(2))))

    for run in asyncio.run(both()):
        assert run.returncode == 0 and run.stdout == b"bound\n", run


def test_the_filter_lets_only_inet_families_make_sockets() -> None:
    program = kernel.seccomp_program(allow_processes=False, allow_exec=True,
                                     allow_network=False, self_pid=4242, allow_loopback=True)
    # the family check: JEQ socket, LD args[0], JEQ AF_INET, JEQ AF_INET6, EPERM, ALLOW
    words = [program[i:i + 8] for i in range(0, len(program), 8)]
    jeq = [(int.from_bytes(w[4:8], "little"), w[2], w[3]) for w in words
           if int.from_bytes(w[0:2], "little") == 0x15]
    assert (41, 0, 5) in jeq and (2, 2, 0) in jeq and (10, 1, 0) in jeq
    assert not any(k == 1 for k, _jt, _jf in jeq)  # AF_UNIX is never let through
    denied = kernel.denied_syscalls(allow_processes=False, allow_exec=True,
                                    allow_network=False)
    assert {"connect", "bind", "listen", "accept"} <= set(denied)
    with pytest.raises(ValueError, match="do not combine"):
        kernel.seccomp_program(allow_processes=False, allow_exec=True, allow_network=False,
                               self_pid=1, allow_loopback=True, allow_unix_listen=True)
