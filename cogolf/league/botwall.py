"""Running one league bot process walled, and keeping its output.

A bot is code the night did not write, so it runs like a sandboxed program:
its own leased unprivileged uid and cgroups, a scrubbed environment (PATH, LANG,
HOME and TMPDIR in a private scratch folder, COGOLF_URL, plus what the night
file passes), Landlock limiting reads to the system, the interpreter's packages
and the entrant's work folder, writes to its scratch folder only, and a network
namespace of its own in which the only thing listening is a relay to the
night's server port on loopback, which forwards only the websockets of the
bot's own seats (`seatgate`); an LLM seat's namespace also relays the night's
model gateway (`llmseat`). Nothing else on the machine, loopback included, is
reachable. A pooled bot's seat URLs come on the launcher's stdin, which
passes each on to the bot once the relay lets it through.

`wrap` turns a bot's argv into a command of this module's launcher, so the
match code starts it like any other bot process. The launcher runs as root,
puts up the walls in the child before it executes, relays the one port, and
keeps the bot's stdout and stderr (merged) in a capped log: the tail is kept,
since the last lines say why a bot died.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import socket
import sys
import tempfile
import time
from collections.abc import Mapping, Sequence
from dataclasses import asdict, dataclass
from pathlib import Path
from typing import IO, TYPE_CHECKING
from urllib.parse import urlsplit

from cogolf.agents.launch import relay_to
from cogolf.league.seatgate import SeatGate
from cogolf.sandbox.cgroups import END_SECONDS
from cogolf.sandbox.reachable import (  # noqa: F401 - the league imports them from here
    BotSetupError,
    bot_python,
    import_path,
    loopback_up,
    readable_by_bots,
)

if TYPE_CHECKING:
    from cogolf.sandbox.cgroups import UidGroups
    from cogolf.sandbox.scratch import SizedScratch

LOG_CAP = 64 * 1024  # bytes of a bot's output kept per match (the tail)
TAIL_LINES = 10  # lines of a failed bot's log quoted in the failure
MAX_TASKS = 64  # threads and processes of one bot together
MEMORY_BYTES = 1 << 30
MAX_RELAYED = 64  # connections open at once through the relay (a pooled bot holds many seats)
GATEWAY_RELAYED = 4  # connections to the gateway at once: an LLM seat makes one call at a time
MAX_SEAT_LINE = 4096  # bytes of one seat URL on a pooled bot's stdin (its newline apart)
FLUSH_SECONDS = 0.5
_EXIT_POLL = 0.02
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
SCRATCH_BYTES = 256 << 20
"""A bot's scratch folder (a tmpfs): a write past it fails. Its pages are memory, counted
in the bot's MEMORY_BYTES (see `sandbox.scratch`)."""
SCRATCH_DIR = "scratch"  # in a bot's folder: its HOME, TMPDIR and default working folder
LIB_DIR = "lib"  # beside it: a link to the cogolf package, on PYTHONPATH
_SIOCGIFFLAGS, _SIOCSIFFLAGS, _IFF_UP = 0x8913, 0x8914, 0x1


@dataclass(frozen=True)
class BotWall:
    """What one bot process may use besides the system and its scratch folder."""

    cwd: str = ""  # its working folder, readable, not writable (default: its scratch)
    readable: tuple[str, ...] = ()  # more folders or files it may read and execute
    env: tuple[tuple[str, str], ...] = ()  # added to the scrubbed environment
    log: str = ""  # where its output goes (written by the launcher, capped)
    scratch_root: str = ""  # where its scratch folder is made (default: the temp folder)
    stdin: bool = False  # the bot reads the launcher's stdin (a pooled bot's seat URLs)
    gateway_port: int = 0  # the night's model gateway, relayed too (an LLM seat's only way out)


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


async def _serve_relay(listener: socket.socket, gate: SeatGate) -> asyncio.Server:
    slots = asyncio.Semaphore(MAX_RELAYED)

    async def one(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        if slots.locked():
            writer.close()
            return
        async with slots:
            await gate.serve(reader, writer)

    return await asyncio.start_server(one, sock=listener)


async def _feed_seats(proc: asyncio.subprocess.Process, gate: SeatGate,
                      source: IO[bytes] | None = None) -> None:
    """A pooled bot's seat URLs come on the launcher's stdin (`source`): each is let
    through the relay before the bot reads it."""
    assert proc.stdin is not None
    reader = asyncio.StreamReader(limit=MAX_SEAT_LINE)
    loop = asyncio.get_running_loop()
    try:
        await loop.connect_read_pipe(lambda: asyncio.StreamReaderProtocol(reader),
                                     source or sys.stdin)
        while line := await reader.readline():
            gate.allow(line.decode("utf-8", "replace"))
            proc.stdin.write(line)
            await proc.stdin.drain()
    except (OSError, ConnectionError, ValueError):
        pass  # a bot that is gone, or a line over the cap: no more seats
    finally:
        with contextlib.suppress(OSError, ConnectionError, RuntimeError):
            proc.stdin.close()


def bot_env(
    wall_env: Mapping[str, str], url: str, scratch: str, packages: Sequence[str]
) -> dict[str, str]:
    """The whole environment of a bot: nothing of the operator's."""
    lib = os.path.join(os.path.dirname(scratch), LIB_DIR)
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


async def _read_log(stream: asyncio.StreamReader, log: _TailLog) -> None:
    while chunk := await stream.read(1 << 16):
        log.add(chunk)


class _ScratchWatch:
    """Notes once, in the bot's log, that its scratch folder is full: checked now and
    then while it runs (`watch`) and once more at its end (`check`)."""

    def __init__(self, sized: SizedScratch | None, log: _TailLog) -> None:
        self.sized, self.log, self.noted = sized, log, False

    def check(self) -> bool:
        if self.sized is None or self.noted or not self.sized.full():
            return self.noted
        self.noted = True
        self.log.note(f"the scratch folder is full: it holds at most {SCRATCH_BYTES >> 20} "
                      "MiB, and a write past it fails (No space left on device)")
        return True

    async def watch(self) -> None:
        while self.sized is not None and not self.check():
            await asyncio.sleep(FLUSH_SECONDS)


async def _launch(wall: BotWall, argv: list[str], url: str, log: _TailLog) -> int:
    """Run the bot to its end (or until the launcher is told to stop: SIGTERM, SIGINT,
    SIGHUP, or its parent's death), then end its whole cgroup, whatever it left
    running, before the uid's lease is let go."""
    from cogolf.sandbox import kernel
    from cogolf.sandbox.cgroups import BOT_PREFIX, UidGroups, available_bases
    from cogolf.sandbox.scratch import SizedScratch
    from cogolf.sandbox.walls import WallSpec, enter_walls, lease_uid

    port = urlsplit(url).port
    if port is None:
        log.note(f"no port in the seat URL {url!r}")
        return 2
    stop = asyncio.Event()
    for signum in (signal.SIGTERM, signal.SIGINT, signal.SIGHUP):
        asyncio.get_running_loop().add_signal_handler(signum, stop.set)
    # the ends below run last first, on every way out
    with lease_uid() as uid, contextlib.ExitStack() as ends:
        ends.callback(log.flush)
        root = os.geteuid() == 0
        groups = UidGroups.create(uid, available_bases(), BOT_PREFIX) if root else None
        if groups is not None:
            groups.configure(max_tasks=MAX_TASKS, memory_bytes=MEMORY_BYTES)
        # The bot's folder: its scratch (the one place it may write, its HOME and TMPDIR)
        # beside a link to the cogolf package, which it may read but not replace.
        folder = tempfile.mkdtemp(prefix="cogolf-bot-", dir=wall.scratch_root or None)
        ends.callback(shutil.rmtree, folder, ignore_errors=True)
        os.chmod(folder, 0o711)
        scratch, lib = os.path.join(folder, SCRATCH_DIR), os.path.join(folder, LIB_DIR)
        packages = import_path()
        os.mkdir(scratch, 0o700)
        os.mkdir(lib, 0o755)
        os.symlink(packages[0], os.path.join(lib, "cogolf"))
        watch = _ScratchWatch(None, log)
        if root:
            try:
                watch.sized = SizedScratch(scratch, SCRATCH_BYTES, uid)
            except OSError as exc:
                log.note(f"cannot give the bot a scratch folder of {SCRATCH_BYTES >> 20} MiB: "
                         f"{exc}")
                return 127
            ends.callback(watch.sized.close)  # frees its pages, charged to the bot's memory
        ends.callback(watch.check)
        cwd = wall.cwd or scratch
        spec = WallSpec(
            readable=(lib,),
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
                loopback_up()
            listeners = [socket.socket(socket.AF_INET, socket.SOCK_STREAM)
                         for _ in range(2 if wall.gateway_port else 1)]
            for listener, at in zip(listeners, (port, wall.gateway_port), strict=False):
                listener.bind(("127.0.0.1", at))
                listener.listen(MAX_RELAYED)
            socket.send_fds(theirs, [b"L"], [s.fileno() for s in listeners])
            for listener in listeners:
                listener.close()
            theirs.close()
            enter_walls(spec, uid, dirs)

        env = bot_env(dict(wall.env), url, scratch, packages)
        try:
            proc = await asyncio.create_subprocess_exec(
                *argv,
                stdin=asyncio.subprocess.PIPE if wall.stdin else asyncio.subprocess.DEVNULL,
                stdout=asyncio.subprocess.PIPE,
                stderr=asyncio.subprocess.STDOUT,
                cwd=cwd,
                env=env,
                preexec_fn=walls if root else None,
            )
        except Exception as exc:  # a missing program or a wall that would not go up
            log.note(f"cannot start {argv[0]!r}: {type(exc).__name__}: {exc}")
            return 127
        finally:
            theirs.close()
        relay = gateway = None
        gate = SeatGate.for_url(url, note=log.note)
        if not wall.stdin:
            gate.allow(url)
        feeding = asyncio.ensure_future(_feed_seats(proc, gate)) if wall.stdin else None
        if root:
            ours.settimeout(5.0)
            try:
                _, fds, _, _ = await asyncio.to_thread(socket.recv_fds, ours, 1, 2)
                relay = await _serve_relay(socket.socket(fileno=fds[0]), gate)
                if wall.gateway_port:
                    # Bytes as they are: the gateway itself checks the seat's token.
                    gateway = await relay_to(socket.socket(fileno=fds[1]), wall.gateway_port,
                                             GATEWAY_RELAYED)
            except (OSError, IndexError) as exc:
                log.note(f"cannot relay the server port: {exc}")
                with contextlib.suppress(ProcessLookupError):
                    proc.kill()
        ours.close()
        if feeding is not None:
            ends.callback(feeding.cancel)
        for server in (relay, gateway):
            if server is not None:
                ends.callback(server.close)
        return await _supervise(proc, groups, watch, stop, log)


async def _exit(proc: asyncio.subprocess.Process) -> None:
    """The bot's own exit. Not `proc.wait()`: that waits for its output to close too,
    which a daemon it left holding it keeps open."""
    while proc.returncode is None:
        await asyncio.sleep(_EXIT_POLL)


async def _reap_orphans(groups: UidGroups | None, log: _TailLog) -> None:
    """Reap what the bot left (the launcher is their subreaper), so its uid is handed
    on with none of its places in the pids count taken. Only once the bot itself was
    reaped, which asyncio does by its pid."""
    give_up = time.monotonic() + END_SECONDS
    while True:
        with contextlib.suppress(ChildProcessError):
            while os.waitpid(-1, os.WNOHANG)[0]:
                pass
        if groups is None or groups.empty(reaped=True):
            return
        if time.monotonic() >= give_up:
            log.note(f"tasks of the bot not reaped after {END_SECONDS:g} s")
            return
        await asyncio.sleep(_EXIT_POLL / 10)


async def _supervise(proc: asyncio.subprocess.Process, groups: UidGroups | None,
                     watch: _ScratchWatch, stop: asyncio.Event, log: _TailLog) -> int:
    assert proc.stdout is not None
    reading = asyncio.ensure_future(_read_log(proc.stdout, log))
    watching = asyncio.ensure_future(watch.watch())
    exited = asyncio.ensure_future(_exit(proc))
    stopped = asyncio.ensure_future(stop.wait())
    try:
        await asyncio.wait([exited, stopped], return_when=asyncio.FIRST_COMPLETED)
        if not exited.done():
            log.note("told to stop: ending the bot")
        # The bot is its first process: once that ends, or the launcher is told to stop,
        # everything it started ends with its cgroup (daemons that called setsid and
        # still hold its output included), and only then is its output read to the end.
        if proc.returncode is None:
            with contextlib.suppress(ProcessLookupError):
                proc.kill()
        if groups is not None and not await groups.end():
            log.note(f"tasks of the bot still there after {END_SECONDS:g} s")
        code = await proc.wait()
        await _reap_orphans(groups, log)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(reading), timeout=END_SECONDS)
    finally:
        for task in (reading, watching, exited, stopped):
            task.cancel()
    if code < 0:
        log.note(f"killed by signal {signal.Signals(-code).name}")
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
        gateway_port=int(raw.get("gateway_port", 0)),
    )
    url = os.environ.get("COGOLF_URL", "")
    log = _TailLog(wall.log)
    if os.geteuid() == 0:
        from cogolf.sandbox import kernel

        # While the launcher has one thread: the bot's scratch is mounted in a mount
        # namespace of the launcher's own. And it ends its bot if its parent (the night)
        # dies, however that died.
        try:
            kernel.private_mount_namespace()
            kernel.parent_death_signal(signal.SIGTERM)
            kernel.child_subreaper()
        except OSError as exc:
            log.note(f"launcher cannot start: {exc}")
            return 127
        if os.getppid() == 1:
            log.note("launcher's parent died before it started")
            return 127
    try:
        return asyncio.run(_launch(wall, args[2:], url, log))
    except Exception as exc:  # the launcher's own failure still ends up in the bot's log
        log.note(f"launcher failed: {type(exc).__name__}: {exc}")
        raise


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
