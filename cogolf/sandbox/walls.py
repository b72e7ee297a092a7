"""Kernel walls for external programs (compilers, interpreters, test runners).

The same walls as the Python sandbox, shaped for programs that need a toolchain
on disk, a scratch directory and perhaps a few processes: `WallSpec` says what
may be read, written, executed and how many tasks may exist; `enter_walls` puts
them up in a forked child before it executes; `run_external` runs one program
under them with CPU, wall-clock and output caps and kills the whole cgroup and
process group on any limit. `lease_uid` gives each concurrently running program
its own unprivileged uid (safe across processes).

DAC still applies after the uid drop: readable paths must be readable by any uid
(a toolchain under a private home directory is not), or set `drop_uid=False` and
rely on Landlock, seccomp and the namespaces alone.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import time
from collections.abc import AsyncIterator, Mapping, Sequence
from dataclasses import dataclass
from functools import partial

import structlog

from cogolf.sandbox import kernel
from cogolf.sandbox.cgroups import EXTERNAL_PREFIX, UidGroups, available_bases
from cogolf.sandbox.reachable import loopback_up
from cogolf.sandbox.uids import lease_uid

__all__ = [
    "SYSTEM_CONFIG_PATHS",
    "SYSTEM_PATHS",
    "ExternalRun",
    "WallSpec",
    "WallStartError",
    "WalledProcess",
    "enter_walls",
    "lease_uid",
    "run_external",
    "walled_process",
]

SYSTEM_PATHS: tuple[str, ...] = (
    "/usr",
    "/lib",
    "/lib64",
    "/lib32",
    "/bin",
    "/sbin",
    "/etc/ld.so.cache",
    "/etc/ld.so.conf",
    "/etc/ld.so.conf.d",
    "/etc/alternatives",
    "/etc/localtime",
    "/dev/null",
    "/dev/zero",
    "/dev/urandom",
    "/dev/random",
)
"""Readable and executable for every external program unless `system_paths=False`:
the dynamic loader, shared libraries and standard tools. Not /etc as a whole."""

SYSTEM_CONFIG_PATHS: tuple[str, ...] = ("/etc/racket",)
"""Readable (not executable) with the system paths: toolchain configuration that
runtimes read at start (Racket's `config.rktd`). A path that does not exist grants
nothing."""

WRITABLE_DEVICES: tuple[str, ...] = ("/dev/null",)
"""Written by every external program that may: what is written there is gone (a
subprocess's DEVNULL, a library that pickles to /dev/null to measure)."""

TERMINAL_PATHS: tuple[str, ...] = ("/dev/ptmx", "/dev/pts", "/dev/tty")
"""What `WallSpec.terminals` grants: a pseudo-terminal's multiplexer and its slaves;
/dev/tty is a process's own controlling terminal (it has none unless it made one)."""

_POLL_SECONDS = 0.05
log = structlog.get_logger(__name__)


@dataclass(frozen=True)
class WallSpec:
    readable: tuple[str, ...] = ()
    """Extra paths that may be read (files, or directories with everything below)."""
    writable: tuple[str, ...] = ()
    """Scratch directories that may be written (and are handed to the run's uid)."""
    executable: tuple[str, ...] = ()
    """Extra paths whose files may be executed (and read)."""
    max_processes: int = 0
    """Tasks (processes or threads) beyond the first; 0 means no fork and no thread."""
    memory_bytes: int = 256 << 20
    """Memory the whole run may charge (cgroup), all its processes together."""
    cpu_seconds: int | None = None
    """RLIMIT_CPU backstop per process; run_external's own cap covers the whole tree."""
    network: bool = False
    drop_uid: bool = True
    address_space_bytes: int | None = None
    """RLIMIT_AS per process; off by default since many runtimes reserve large maps."""
    system_paths: bool = True
    max_file_bytes: int = 64 << 20
    """RLIMIT_FSIZE when something is writable (0 otherwise)."""
    max_open_files: int = 256
    unix_listen: bool = False
    """Without network: unix sockets may be created, bound and listened on (never
    connected to), for a browser's single-instance lock. See `kernel.seccomp_program`."""
    terminals: bool = False
    """Pseudo-terminals may be opened (`/dev/ptmx`, `/dev/pts`: read, written, ioctl'd),
    for programs that drive others through a terminal (pexpect). The run's uid opens
    only the terminals it made: devpts gives each its owner's uid and mode 620 at most.
    TIOCSTI (typing into a terminal) stays refused by seccomp."""
    loopback: bool = False
    """Without network: TCP and UDP within a network namespace of the run's own, whose
    only interface is `lo` (a test suite's local servers). Nothing of the host is
    reachable: not its loopback, and no unix socket (socket() takes only AF_INET and
    AF_INET6). Needs root, which makes the namespace; without it the run has no
    network at all. Does not combine with `unix_listen`."""


@dataclass(frozen=True)
class ExternalRun:
    returncode: int | None
    stdout: bytes
    stderr: bytes
    timed_out: bool
    cpu_seconds: float
    reason: str
    """"exit", "cpu", "wall", "memory", "start_failed"."""
    wall_seconds: float = 0.0
    stdout_truncated: bool = False
    stderr_truncated: bool = False


NPROC_SLACK = 16  # room in RLIMIT_NPROC for processes of the uid that are still exiting


def _cgroup_dirs(uid: int) -> tuple[str, ...]:
    return tuple(UidGroups.create(uid, available_bases(), EXTERNAL_PREFIX).join_paths())


def enter_walls(spec: WallSpec, uid: int, cgroup_dirs: tuple[str, ...] | None = None) -> None:
    """Put up every wall of `spec` on the calling process (a child before exec).

    Raises kernel.WallError if a wall cannot be put up; as a preexec function that
    makes the start fail, which is the point: never run a program half-walled.
    """
    root = os.geteuid() == 0
    # only a namespace of the run's own keeps its sockets from the host's
    loopback = spec.loopback and root and not spec.network
    if root:
        dirs = cgroup_dirs if cgroup_dirs is not None else _cgroup_dirs(uid)
        if dirs:
            kernel.join_cgroups(dirs)
        flags = kernel.CLONE_NEWIPC | kernel.CLONE_NEWUTS | kernel.CLONE_NEWNS
        if not spec.network:
            flags |= kernel.CLONE_NEWNET
        kernel.unshare(flags)
        if loopback:
            loopback_up()  # as root: a new namespace's `lo` starts down
    kernel.set_rlimits(
        address_space=spec.address_space_bytes,
        cpu_seconds=spec.cpu_seconds,
        # A backstop only: forks are stopped by the pids cgroup and (with max_processes
        # 0) seccomp. It counts every process of the uid, so it leaves room for the
        # process itself and for ones of the uid still exiting; too tight a limit makes
        # execve fail with EAGAIN at random.
        nproc=1 + spec.max_processes + NPROC_SLACK,
        nofile=spec.max_open_files,
        fsize=spec.max_file_bytes if spec.writable else 0,
    )
    kernel.no_new_privs()
    system = SYSTEM_PATHS if spec.system_paths else ()
    config = SYSTEM_CONFIG_PATHS if spec.system_paths else ()
    # Landlock before the uid drop: the rules open their paths, and a path below a
    # directory only root may traverse must still be grantable.
    kernel.landlock_restrict(
        # /etc/hosts: so that "localhost" resolves
        readable=tuple(spec.readable) + config + (("/etc/hosts",) if loopback else ()),
        writable=spec.writable,
        executable=tuple(spec.executable) + system,
        devices=WRITABLE_DEVICES + (TERMINAL_PATHS if spec.terminals else ()),
        allow_tcp=spec.network or loopback,
    )
    if root and spec.drop_uid:
        kernel.drop_uid(uid)
    if kernel.seccomp_available():
        kernel.seccomp_install(
            kernel.seccomp_program(
                allow_processes=spec.max_processes > 0,
                allow_exec=True,
                allow_network=spec.network,
                self_pid=os.getpid(),
                signal_self_only=spec.max_processes == 0,
                # Rust's Command spawns through a socket pair whenever it searches PATH
                # itself (e.g. rustc running `cc`); with processes allowed, the tree may
                # already talk to itself over pipes, so this opens nothing new.
                allow_socketpair=spec.max_processes > 0,
                allow_unix_listen=spec.unix_listen,
                allow_loopback=loopback,
            )
        )


def _hand_over(paths: Sequence[str], uid: int) -> None:
    """Give the run's uid ownership of its scratch directories."""
    for top in paths:
        if not os.path.lexists(top) or os.path.islink(top):
            continue  # a link is never handed over: its target could be anywhere
        os.chown(top, uid, uid, follow_symlinks=False)
        for dirpath, dirnames, filenames in os.walk(top):
            for name in dirnames + filenames:
                with contextlib.suppress(OSError):
                    os.chown(os.path.join(dirpath, name), uid, uid, follow_symlinks=False)


async def _drain(stream: asyncio.StreamReader | None, cap: int) -> tuple[bytes, bool]:
    if stream is None:
        return b"", False
    kept = bytearray()
    truncated = False
    while True:
        chunk = await stream.read(1 << 16)
        if not chunk:
            return bytes(kept), truncated
        room = cap - len(kept)
        if len(chunk) > room:
            truncated = True
        if room > 0:
            kept += chunk[:room]


def _proc_cpu(pid: int) -> float:
    try:
        with open(f"/proc/{pid}/stat", "rb") as fh:
            rest = fh.read()
    except OSError:
        return 0.0
    fields = rest[rest.rfind(b")") + 2 :].split()
    try:
        # own time plus that of reaped children
        return sum(int(fields[i]) for i in (11, 12, 13, 14)) / os.sysconf("SC_CLK_TCK")
    except (IndexError, ValueError):
        return 0.0


class WallStartError(Exception):
    """The program could not be started under its walls (a failed wall included)."""


@dataclass
class WalledProcess:
    """A running program under its walls: its CPU time as the kernel counts it, and
    how to end it with everything it started."""

    proc: asyncio.subprocess.Process
    groups: UidGroups | None
    cpu_base: float
    memory_failures_base: int

    def cpu_used(self) -> float:
        if self.groups is not None:
            now = self.groups.cpu_seconds()
            if now is not None:
                return now - self.cpu_base
        return _proc_cpu(self.proc.pid)

    def _kill_tree(self) -> None:
        if self.proc.returncode is None:  # once reaped, its number may be another's
            with contextlib.suppress(OSError):
                os.killpg(self.proc.pid, signal.SIGKILL)
        if self.groups is not None:
            self.groups.kill_all()

    async def end(self, wait_task: asyncio.Future[int] | None = None) -> None:
        """Kill the process group and the cgroup, and wait until every task is reaped
        (orphaned grandchildren are reaped by init, not by this server), at most
        `cgroups.END_SECONDS` beyond the program's own exit."""
        self._kill_tree()
        await (wait_task if wait_task is not None else self.proc.wait())
        # what it left running (daemons that called setsid) dies with the cgroup
        if self.groups is not None and not await self.groups.end(reaped=True):
            log.warning("external run left tasks behind", tasks=self.groups.charged_tasks(),
                        group=self.groups.dirs.get("pids"))

    def died_of_memory(self) -> bool:
        """True when the run was killed and its cgroup refused memory meanwhile."""
        return (
            self.groups is not None
            and self.groups.memory_failures() > self.memory_failures_base
            and self.proc.returncode is not None
            and self.proc.returncode < 0
        )


@contextlib.asynccontextmanager
async def walled_process(
    argv: Sequence[str],
    *,
    cwd: str,
    spec: WallSpec,
    env: Mapping[str, str],
    pass_fds: Sequence[int] = (),
) -> AsyncIterator[WalledProcess]:
    """Start `argv` under `spec` with its own leased uid and cgroups, pipes on all
    three streams. However the block ends (an error or a cancellation included), the
    program and everything it started are killed before the uid is released.
    Raises `WallStartError` when it cannot start."""
    bases = available_bases() if os.geteuid() == 0 else {}
    with lease_uid() as uid:
        groups = UidGroups.create(uid, bases, EXTERNAL_PREFIX) if bases else None
        if groups is not None:
            groups.configure(max_tasks=1 + spec.max_processes, memory_bytes=spec.memory_bytes)
            groups.kill_all()
        cpu_base = (groups.cpu_seconds() if groups else None) or 0.0
        memory_failures_base = groups.memory_failures() if groups else 0
        if os.geteuid() == 0 and spec.drop_uid:
            _hand_over(spec.writable, uid)
        spawn = asyncio.ensure_future(asyncio.create_subprocess_exec(
            *argv,
            stdin=asyncio.subprocess.PIPE,
            stdout=asyncio.subprocess.PIPE,
            stderr=asyncio.subprocess.PIPE,
            cwd=cwd,
            env=dict(env),
            start_new_session=True,
            pass_fds=tuple(pass_fds),
            preexec_fn=partial(
                enter_walls, spec, uid, tuple(groups.join_paths()) if groups else ()
            ),
        ))
        try:
            # Shielded: cancelled while its pipes connect, asyncio kills the program
            # alone and then waits, forever, for pipes its daemons hold.
            proc = await asyncio.shield(spawn)
        except asyncio.CancelledError:
            with contextlib.suppress(Exception):  # the start finishes, then it all ends
                await WalledProcess(await spawn, groups, cpu_base, 0).end()
            raise
        except Exception as exc:  # includes a failed wall
            raise WallStartError(f"{type(exc).__name__}: {exc}") from exc
        walled = WalledProcess(proc, groups, cpu_base, memory_failures_base)
        try:
            yield walled
        finally:
            # Again after a normal end (it is cheap then); after an error or a cancel
            # (Ctrl-C) the first time. Interrupted itself, the lease's end still kills.
            await walled.end()


def start_failed(message: str, started: float) -> ExternalRun:
    return ExternalRun(
        None, b"", message.encode(), False, 0.0, "start_failed", time.monotonic() - started
    )


async def run_external(
    argv: Sequence[str],
    *,
    stdin: bytes = b"",
    cwd: str,
    spec: WallSpec,
    cpu_seconds: float,
    wall_seconds: float,
    max_output_bytes: int = 1 << 20,
    env: Mapping[str, str] | None = None,
    pass_fds: Sequence[int] = (),
) -> ExternalRun:
    """Run `argv` under `spec`; kill the whole group on CPU, wall or memory limits.

    `pass_fds`: descriptors the program inherits (a results channel, say)."""
    started = time.monotonic()
    run_env = (
        dict(env)
        if env is not None
        else {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": cwd, "LANG": "C.UTF-8"}
    )
    try:
        async with walled_process(
            argv, cwd=cwd, spec=spec, env=run_env, pass_fds=pass_fds
        ) as walled:
            return await _supervise(
                walled, stdin, started, cpu_seconds, wall_seconds, max_output_bytes
            )
    except WallStartError as exc:
        return start_failed(str(exc), started)


async def _supervise(
    walled: WalledProcess,
    stdin: bytes,
    started: float,
    cpu_seconds: float,
    wall_seconds: float,
    max_output_bytes: int,
) -> ExternalRun:
    proc = walled.proc
    out_task = asyncio.ensure_future(_drain(proc.stdout, max_output_bytes))
    err_task = asyncio.ensure_future(_drain(proc.stderr, max_output_bytes))

    async def feed() -> None:
        assert proc.stdin is not None
        with contextlib.suppress(OSError, ConnectionError):
            proc.stdin.write(stdin)
            await proc.stdin.drain()
        with contextlib.suppress(OSError, ConnectionError):
            proc.stdin.close()

    feed_task = asyncio.ensure_future(feed())
    reason = "exit"
    deadline = started + wall_seconds
    wait_task = asyncio.ensure_future(proc.wait())
    try:
        while not wait_task.done():
            await asyncio.wait([wait_task], timeout=_POLL_SECONDS)
            if wait_task.done() or proc.returncode is not None:
                # exited; what it left running (holding the pipes) dies with the group
                break
            if walled.cpu_used() > cpu_seconds:
                reason = "cpu"
            elif time.monotonic() > deadline:
                reason = "wall"
            else:
                continue
            break
    except BaseException:  # cancelled (Ctrl-C): `walled_process` ends the run
        for task in (out_task, err_task, feed_task, wait_task):
            task.cancel()
        raise
    await walled.end(wait_task)
    feed_task.cancel()
    try:
        (stdout, out_trunc), (stderr, err_trunc) = await asyncio.wait_for(
            asyncio.gather(out_task, err_task), timeout=2.0
        )
    except TimeoutError:
        # a grandchild outside the group still holds the pipes: give up on them
        out_task.cancel()
        err_task.cancel()
        stdout, out_trunc, stderr, err_trunc = b"", True, b"", True
    if reason == "exit" and walled.died_of_memory():
        reason = "memory"
    return ExternalRun(
        returncode=proc.returncode,
        stdout=stdout,
        stderr=stderr,
        timed_out=reason in ("cpu", "wall"),
        cpu_seconds=walled.cpu_used(),
        reason=reason,
        wall_seconds=time.monotonic() - started,
        stdout_truncated=out_trunc,
        stderr_truncated=err_trunc,
    )
