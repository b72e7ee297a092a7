"""Running one agent walled, with the model gateway as the only address it can reach.

`python -m cogolf.agents.launch WALL_JSON -- ARGV...` runs as root, one per attempt
(a fresh single-threaded process, so nothing is forked from a process with threads):
it leases a uid and its cgroups, hands the workspace and the scratch folder to that
uid, and starts the agent behind every wall (no_new_privs, seccomp, Landlock: it
reads the system, this installation's packages and what its entrant names, writes
its workspace and scratch only) in a network namespace of its own whose only open
port is a relay to the gateway's port on loopback.

Its first stdout line names the cgroups (so the harness can kill them even if the
launcher dies); SIGTERM, or the agent's exit, kills the whole cgroup (a double
fork, a process ignoring SIGTERM die with it) before the last line reports the exit.
The agent's merged output is kept as the last LOG_CAP bytes in the log file.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import signal
import socket
import sys
from collections.abc import Sequence
from dataclasses import asdict, dataclass

from cogolf.sandbox.cgroups import AGENT_PREFIX

LOG_CAP = 64 * 1024
MAX_RELAYED = 16  # connections to the gateway at once: what one agent can hold of it
CGROUP_PREFIX = AGENT_PREFIX  # one of the prefixes a sweep of a uid looks at
# Public system files clients read at start: CA certificates (an HTTP client loads them
# even for a plain-http gateway), the hosts file.
SYSTEM_READABLE = ("/etc/ssl", "/etc/hosts", "/etc/nsswitch.conf", "/etc/gitconfig")
RELAY_CHUNK = 1 << 16
POLL_SECONDS = 0.05


@dataclass(frozen=True)
class AgentWall:
    workspace: str
    scratch: str
    log: str
    port: int  # the gateway's, on loopback
    readable: tuple[str, ...] = ()  # read and execute: packages, the agent's installation
    env: tuple[tuple[str, str], ...] = ()  # the agent's whole environment
    max_processes: int = 256
    memory_bytes: int = 4 << 30


def launcher(argv: Sequence[str], wall: AgentWall) -> list[str]:
    return [sys.executable, "-P", "-m", "cogolf.agents.launch", json.dumps(asdict(wall)), "--",
            *argv]


def _emit(doc: dict[str, object]) -> None:
    sys.stdout.write(json.dumps(doc) + "\n")
    sys.stdout.flush()


def _hand_over(top: str, uid: int) -> None:
    os.chown(top, uid, uid, follow_symlinks=False)
    for dirpath, dirnames, filenames in os.walk(top):
        for name in dirnames + filenames:
            with contextlib.suppress(OSError):
                os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(RELAY_CHUNK):
            writer.write(chunk)
            await writer.drain()
    except (OSError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(OSError, ConnectionError, RuntimeError):
            writer.close()


async def relay_to(listener: socket.socket, port: int, most: int = MAX_RELAYED) -> asyncio.Server:
    """Serve `listener` (in a walled namespace) by piping each connection, bytes as they
    are, to `port` on this namespace's loopback; at most `most` at once."""
    slots = asyncio.Semaphore(most)

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if slots.locked():
            writer.close()
            return
        async with slots:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    return await asyncio.start_server(one, sock=listener)


async def _launch(wall: AgentWall, argv: list[str]) -> dict[str, object]:
    from cogolf.sandbox import kernel
    from cogolf.sandbox.cgroups import UidGroups, available_bases
    from cogolf.sandbox.reachable import loopback_up
    from cogolf.sandbox.walls import WallSpec, enter_walls, lease_uid

    root = os.geteuid() == 0
    with lease_uid() as uid:
        groups = UidGroups.create(uid, available_bases(), CGROUP_PREFIX) if root else None
        if groups is not None:
            groups.configure(max_tasks=wall.max_processes + 1, memory_bytes=wall.memory_bytes)
            groups.kill_all()
        _emit({"cgroups": groups.join_paths() if groups is not None else [], "uid": uid})
        if root:
            for top in (wall.workspace, wall.scratch):
                _hand_over(top, uid)
        spec = WallSpec(
            readable=SYSTEM_READABLE,
            writable=(wall.workspace, wall.scratch, "/dev/null"),  # `2>/dev/null` works
            executable=(wall.workspace, wall.scratch, *wall.readable),
            max_processes=wall.max_processes,
            memory_bytes=wall.memory_bytes,
            network=True,  # its own namespace below is the network wall
            max_open_files=4096,
            max_file_bytes=1 << 30,
        )
        ours, theirs = socket.socketpair()
        dirs = tuple(groups.join_paths()) if groups is not None else ()

        def walls() -> None:
            kernel.unshare(kernel.CLONE_NEWNET)
            loopback_up()
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
                listener.bind(("127.0.0.1", wall.port))
                listener.listen(MAX_RELAYED)
                socket.send_fds(theirs, [b"L"], [listener.fileno()])
            theirs.close()
            enter_walls(spec, uid, dirs)

        try:
            proc = await asyncio.create_subprocess_exec(
                *argv, stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT, cwd=wall.workspace, env=dict(wall.env),
                preexec_fn=walls if root else None, start_new_session=True,
            )
        except Exception as exc:  # a missing program or a wall that would not go up
            theirs.close()
            return {"started": False, "error": f"{type(exc).__name__}: {exc}"[:500],
                    "walled": root}
        theirs.close()
        relay = None
        if root:
            ours.settimeout(5.0)
            try:
                _, fds, _, _ = await asyncio.to_thread(socket.recv_fds, ours, 1, 1)
                relay = await relay_to(socket.socket(fileno=fds[0]), wall.port)
            except (OSError, IndexError) as exc:
                _kill(proc.pid, groups)
                await proc.wait()
                return {"started": False, "error": f"cannot relay the gateway: {exc}",
                        "walled": root}
        ours.close()

        stop = asyncio.Event()
        loop = asyncio.get_running_loop()
        loop.add_signal_handler(signal.SIGTERM, stop.set)
        tail = bytearray()
        dropped = 0

        async def read() -> None:
            nonlocal dropped
            assert proc.stdout is not None
            while chunk := await proc.stdout.read(1 << 16):
                tail.extend(chunk)
                if len(tail) > LOG_CAP:
                    dropped += len(tail) - LOG_CAP
                    del tail[:len(tail) - LOG_CAP]

        reading = asyncio.ensure_future(read())
        # The exit itself, not `wait()`: that also waits for the pipes, which whatever the
        # agent left running still holds.
        while proc.returncode is None and not stop.is_set():
            await asyncio.sleep(POLL_SECONDS)
        stopped = proc.returncode is None
        # The agent is done or out of time: everything it started dies with its cgroup.
        _kill(proc.pid, groups)
        while proc.returncode is None:
            await asyncio.sleep(0.01)
        code = proc.returncode
        for _ in range(500):
            if not _kill(proc.pid, groups) and not (groups and groups.charged_tasks()):
                break
            await asyncio.sleep(0.01)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(reading, 2.0)
        reading.cancel()
        if relay is not None:
            relay.close()
        _write_log(wall.log, bytes(tail), dropped)
        left = groups.charged_tasks() if groups is not None else None
        return {"started": True, "exit": code, "stopped": stopped, "walled": root,
                "left": left or 0}


def _kill(pid: int, groups: object) -> int:
    with contextlib.suppress(OSError):
        os.killpg(pid, signal.SIGKILL)
    return groups.kill_all() if groups is not None else 0  # type: ignore[attr-defined]


def _write_log(path: str, data: bytes, dropped: int) -> None:
    head = f"[cogolf] {dropped} earlier bytes dropped\n".encode() if dropped else b""
    fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(head + data)


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: python -m cogolf.agents.launch WALL_JSON -- ARGV...", file=sys.stderr)
        return 2
    raw = json.loads(args[0])
    wall = AgentWall(**{**raw, "readable": tuple(raw["readable"]),
                        "env": tuple((k, v) for k, v in raw["env"])})
    try:
        _emit(asyncio.run(_launch(wall, args[2:])))
    except Exception as exc:
        _emit({"started": False, "error": f"launcher failed: {type(exc).__name__}: {exc}"[:500]})
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
