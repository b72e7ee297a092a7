"""Running one league bot process walled, and keeping its output.

A bot is code the night did not write, so it runs like a sandboxed program:
its own leased unprivileged uid and cgroups, a scrubbed environment (PATH, LANG,
HOME and TMPDIR in a private scratch folder, COGOLF_URL, plus what the night
file passes), Landlock limiting reads to the system, the interpreter's packages
and the entrant's work folder, writes to its scratch folder only, and a network
namespace of its own in which the only thing listening is a relay to the
night's server port on loopback. Nothing else on the machine, loopback
included, is reachable.

`wrap` turns a bot's argv into a command of this module's launcher, so the
match code starts it like any other bot process. The launcher runs as root,
puts up the walls in the child before it executes, relays the one port, and
keeps the bot's stdout and stderr (merged) in a capped log: the tail is kept,
since the last lines say why a bot died.
"""

from __future__ import annotations

import asyncio
import contextlib
import fcntl
import json
import os
import shutil
import signal
import socket
import stat
import struct
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from urllib.parse import urlsplit

LOG_CAP = 64 * 1024  # bytes of a bot's output kept per match (the tail)
TAIL_LINES = 10  # lines of a failed bot's log quoted in the failure
MAX_TASKS = 64  # threads and processes of one bot together
MEMORY_BYTES = 1 << 30
MAX_RELAYED = 64  # connections open at once through the relay (a pooled bot holds many seats)
FLUSH_SECONDS = 0.5
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
CGROUP_PREFIX = "bot"
LIB_DIR = "lib"  # in a bot's scratch folder: a link to the cogolf package, on PYTHONPATH
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


class BotSetupError(RuntimeError):
    """The machine cannot run a walled bot (e.g. no interpreter other uids can run)."""


@dataclass(frozen=True)
class BotWall:
    """What one bot process may use besides the system and its scratch folder."""

    cwd: str = ""  # its working folder, readable, not writable (default: its scratch)
    readable: tuple[str, ...] = ()  # more folders or files it may read and execute
    env: tuple[tuple[str, str], ...] = ()  # added to the scrubbed environment
    log: str = ""  # where its output goes (written by the launcher, capped)
    scratch_root: str = ""  # where its scratch folder is made (default: the temp folder)
    stdin: bool = False  # the bot reads the launcher's stdin (a pooled bot's seat URLs)


def wrap(argv: Sequence[str], wall: BotWall) -> list[str]:
    """The launcher command that runs `argv` behind `wall` (`{url}` is substituted later)."""
    # -P: the current folder is not on sys.path, so a `cogolf` folder there is not imported.
    return [
        sys.executable,
        "-P",
        "-m",
        "cogolf.league.botwall",
        json.dumps(asdict(wall)),
        "--",
        *argv,
    ]


# --- an interpreter and packages a bot uid can use ---------------------------------


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


def tail(path: Path, lines: int = TAIL_LINES) -> list[str]:
    """The last `lines` non-empty lines of a bot log (empty when there is none)."""
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - LOG_CAP))
            data = f.read(LOG_CAP)
    except OSError:
        return []
    text = data.decode("utf-8", "replace")
    return [line for line in text.splitlines() if line.strip()][-lines:]


# --- the launcher (runs as root, one per bot process) ------------------------------


class _TailLog:
    """The last LOG_CAP bytes of a stream, rewritten to `path` now and then."""

    def __init__(self, path: str) -> None:
        self.path, self.buf, self.dropped = path, bytearray(), 0
        self.dirty, self.flushed = False, 0.0

    def add(self, chunk: bytes) -> None:
        self.buf += chunk
        if len(self.buf) > LOG_CAP:
            cut = len(self.buf) - LOG_CAP
            self.dropped += cut
            del self.buf[:cut]
        self.dirty = True
        if time.monotonic() - self.flushed > FLUSH_SECONDS:
            self.flush()

    def note(self, line: str) -> None:
        self.add(f"[cogolf] {line}\n".encode())
        self.flush()

    def flush(self) -> None:
        self.flushed, self.dirty = time.monotonic(), False
        if not self.path:
            return
        head = f"[cogolf] {self.dropped} earlier bytes dropped\n".encode() if self.dropped else b""
        tmp = f"{self.path}.tmp"
        with contextlib.suppress(OSError):
            fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
            with os.fdopen(fd, "wb") as f:
                f.write(head + bytes(self.buf))
            os.replace(tmp, self.path)


def _loopback_up() -> None:
    """Bring `lo` up in the new network namespace (it starts down)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        req = struct.pack("16sH14x", b"lo", 0)
        flags = struct.unpack("16sH14x", fcntl.ioctl(s, _SIOCGIFFLAGS, req))[1]
        fcntl.ioctl(s, _SIOCSIFFLAGS, struct.pack("16sH14x", b"lo", flags | _IFF_UP))


async def _pipe(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
    try:
        while chunk := await reader.read(1 << 16):
            writer.write(chunk)
            await writer.drain()
    except (OSError, ConnectionError):
        pass
    finally:
        with contextlib.suppress(OSError, ConnectionError):
            writer.close()


async def _serve_relay(listener: socket.socket, port: int) -> asyncio.Server:
    gate = asyncio.Semaphore(MAX_RELAYED)

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if gate.locked():
            writer.close()
            return
        async with gate:
            try:
                up_reader, up_writer = await asyncio.open_connection("127.0.0.1", port)
            except OSError:
                writer.close()
                return
            await asyncio.gather(_pipe(reader, up_writer), _pipe(up_reader, writer))

    return await asyncio.start_server(one, sock=listener)


def bot_env(
    wall_env: Mapping[str, str], url: str, scratch: str, packages: Sequence[str]
) -> dict[str, str]:
    """The whole environment of a bot: nothing of the operator's."""
    lib = os.path.join(scratch, LIB_DIR)
    env = {
        "PATH": BASE_PATH,
        "LANG": "C.UTF-8",
        "HOME": scratch,
        "TMPDIR": scratch,
        "PYTHONPATH": ":".join([lib, *packages[1:]]),
        "PYTHONDONTWRITEBYTECODE": "1",
    }
    env.update(wall_env)
    env["COGOLF_URL"] = url
    return env


async def _launch(wall: BotWall, argv: list[str], url: str, log: _TailLog) -> int:
    from cogolf.sandbox import kernel
    from cogolf.sandbox.cgroups import UidGroups, available_bases
    from cogolf.sandbox.walls import WallSpec, enter_walls, lease_uid

    port = urlsplit(url).port
    if port is None:
        log.note(f"no port in the seat URL {url!r}")
        return 2
    with lease_uid() as uid:
        root = os.geteuid() == 0
        groups = UidGroups.create(uid, available_bases(), CGROUP_PREFIX) if root else None
        if groups is not None:
            groups.configure(max_tasks=MAX_TASKS, memory_bytes=MEMORY_BYTES)
            groups.kill_all()
        scratch = tempfile.mkdtemp(prefix="cogolf-bot-", dir=wall.scratch_root or None)
        packages = import_path()
        os.mkdir(os.path.join(scratch, LIB_DIR))
        os.symlink(packages[0], os.path.join(scratch, LIB_DIR, "cogolf"))
        if root:
            for path in (scratch, os.path.join(scratch, LIB_DIR)):
                os.chown(path, uid, uid)
        cwd = wall.cwd or scratch
        spec = WallSpec(
            executable=(cwd, *packages, *wall.readable),
            writable=(scratch,),
            max_processes=MAX_TASKS - 1,
            memory_bytes=MEMORY_BYTES,
            network=True,  # its own namespace below is the network wall
            max_open_files=1024,
        )
        ours, theirs = socket.socketpair()
        dirs = tuple(groups.join_paths()) if groups is not None else ()

        def walls() -> None:
            if root:
                kernel.unshare(kernel.CLONE_NEWNET)
                _loopback_up()
            with socket.socket(socket.AF_INET, socket.SOCK_STREAM) as listener:
                listener.bind(("127.0.0.1", port))
                listener.listen(MAX_RELAYED)
                socket.send_fds(theirs, [b"L"], [listener.fileno()])
            theirs.close()
            enter_walls(spec, uid, dirs)

        env = bot_env(dict(wall.env), url, scratch, packages)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=None if wall.stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=cwd,
                env=env,
                preexec_fn=walls if root else None,
            )
        except Exception as exc:  # a missing program or a wall that would not go up
            log.note(f"cannot start {argv[0]!r}: {type(exc).__name__}: {exc}")
            shutil.rmtree(scratch, ignore_errors=True)
            return 127
        finally:
            theirs.close()
        relay = None
        if root:
            ours.settimeout(5.0)
            try:
                _, fds, _, _ = await asyncio.to_thread(socket.recv_fds, ours, 1, 1)
                relay = await _serve_relay(socket.socket(fileno=fds[0]), port)
            except (OSError, IndexError) as exc:
                log.note(f"cannot relay the server port: {exc}")
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        ours.close()
        assert proc.stdout is not None
        while chunk := await proc.stdout.read(1 << 16):
            log.add(chunk)
        code = await proc.wait()
        if groups is not None:
            for _ in range(200):  # what it left running dies with its cgroup
                if not groups.kill_all():
                    break
                await asyncio.sleep(0.01)
        if relay is not None:
            relay.close()
        shutil.rmtree(scratch, ignore_errors=True)
        if code < 0:
            log.note(f"killed by signal {signal.Signals(-code).name}")
        log.flush()
        return code if code >= 0 else 128 - code


def main(args: list[str]) -> int:
    if len(args) < 3 or args[1] != "--":
        print("usage: python -m cogolf.league.botwall WALL_JSON -- ARGV...", file=sys.stderr)
        return 2
    raw = json.loads(args[0])
    wall = BotWall(
        cwd=raw["cwd"],
        readable=tuple(raw["readable"]),
        env=tuple((k, v) for k, v in raw["env"]),
        log=raw["log"],
        scratch_root=raw.get("scratch_root", ""),
        stdin=bool(raw.get("stdin", False)),
    )
    url = os.environ.get("COGOLF_URL", "")
    log = _TailLog(wall.log)
    try:
        return asyncio.run(_launch(wall, args[2:], url, log))
    except Exception as exc:  # the launcher's own failure still ends up in the bot's log
        log.note(f"launcher failed: {type(exc).__name__}: {exc}")
        raise


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
