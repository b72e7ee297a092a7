"""Fork mode: a small clean interpreter (the zygote) forks one walled child per batch.

The zygote starts once with `-I -S -B`, preloads the modules programs may use,
enters empty network/IPC/UTS/mount namespaces, installs the shared part of the
seccomp filter, builds the Landlock ruleset, and then only forks. It never sees a
program, a test or a result: the server hands it two pipe ends over a unix socket,
the forked child takes them, puts up its own walls and reads its request straight
from the server. The zygote answers with the child's pid and a pidfd, reaps each
child as soon as it exits and says so; the server ends a uid lease only then.
A few children are forked ahead of demand (see `base.BaseSandbox`).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
from collections import Counter, OrderedDict
from collections.abc import Sequence
from typing import Any

import structlog

from cogolf.sandbox.api import MATCH_HASH_SEEDS, Limits
from cogolf.sandbox.base import MAX_HASH_SEEDS, POOL_SIZE, BaseSandbox
from cogolf.sandbox.cgroups import UidGroups
from cogolf.sandbox.channel import LineReader, PipeWriter
from cogolf.sandbox.interpreter import child_argv, child_env
from cogolf.sandbox.session import ChildProcess

log = structlog.get_logger(__name__)

_START_TIMEOUT = 10.0
_REPLY_TIMEOUT = 5.0


class ZygoteError(RuntimeError):
    pass


class Zygote:
    """The server's end of the fork server.

    One reader dispatches everything the zygote sends: the answer to each fork
    request (matched by id, with the child's pidfd) and a notice each time it has
    reaped a child, which is what lets a uid lease end only once its child is gone.
    """

    def __init__(self, python: str, cwd: str, hash_seed: int | None = None) -> None:
        self._python = python
        self._cwd = cwd
        self.hash_seed = hash_seed  # every child inherits the zygote's hash secret
        self._sock: socket.socket | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._next_id = 0
        self._replies: dict[int, asyncio.Future[tuple[dict[str, Any], list[int]]]] = {}
        self._reaped: dict[int, asyncio.Future[bool]] = {}
        self._hello: asyncio.Future[dict[str, Any]] | None = None
        self._starting: asyncio.Lock | None = None
        self.walls: dict[str, str] = {}

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    def cpu_seconds(self) -> float:
        """Its own CPU and that of the children it reaped (from /proc; 0 once gone)."""
        try:
            with open(f"/proc/{self.pid}/stat", "rb") as fh:
                fields = fh.read().rsplit(b")", 1)[1].split()
            return sum(int(f) for f in fields[11:15]) / os.sysconf("SC_CLK_TCK")
        except (OSError, ValueError, TypeError):
            return 0.0

    async def start(self) -> None:
        loop = asyncio.get_running_loop()
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._popen = subprocess.Popen(
                child_argv(self._python, "zygote", str(theirs.fileno())),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), close_fds=True, start_new_session=True,
                env=child_env(self.hash_seed), cwd=self._cwd,
            )
        finally:
            theirs.close()
        ours.setblocking(False)
        self._sock = ours
        self._hello = loop.create_future()
        loop.add_reader(ours.fileno(), self._on_readable, ours)
        try:
            hello = await asyncio.wait_for(asyncio.shield(self._hello), _START_TIMEOUT)
        except TimeoutError as exc:
            await self.stop()
            raise ZygoteError("fork server did not start") from exc
        self.walls = {str(k): str(v) for k, v in hello.get("walls", {}).items()}
        log.info("zygote started", pid=self._popen.pid, walls=self.walls)

    def _on_readable(self, sock: socket.socket) -> None:
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 2)
            except (BlockingIOError, InterruptedError):
                return
            except OSError:
                msg, fds = b"", []
            if not msg:
                self._lost()
                return
            try:
                obj = json.loads(msg)
            except ValueError:
                obj = None
            if type(obj) is not dict:
                for fd in fds:
                    os.close(fd)
                continue
            self._dispatch(obj, fds)

    def _dispatch(self, obj: dict[str, Any], fds: list[int]) -> None:
        kind = obj.get("k")
        if kind == "reaped" and type(obj.get("pid")) is int:
            fut = self._reaped.pop(obj["pid"], None)
            if fut is not None and not fut.done():
                fut.set_result(True)
        elif kind == "forked" and type(obj.get("id")) is int:
            reply = self._replies.pop(obj["id"], None)
            if reply is not None and not reply.done():
                if type(obj.get("pid")) is int and fds:
                    # registered before anything else runs, so its notice cannot be missed
                    self._reaped[obj["pid"]] = asyncio.get_running_loop().create_future()
                reply.set_result((obj, fds))
                return
        elif kind == "hello" and self._hello is not None and not self._hello.done():
            self._hello.set_result(obj)
        for fd in fds:
            os.close(fd)

    def _lost(self) -> None:
        """The zygote is gone: fail every pending request; orphans are watched by pid."""
        if self._sock is not None:
            with contextlib.suppress(ValueError, OSError):
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
            self._sock.close()
            self._sock = None
        for fut in self._replies.values():
            if not fut.done():
                fut.set_exception(ZygoteError("fork server exited"))
        self._replies.clear()
        for waiter in self._reaped.values():
            if not waiter.done():
                waiter.set_result(False)  # the orphans' reaper is init now: watch them
        self._reaped.clear()
        if self._hello is not None and not self._hello.done():
            self._hello.set_exception(ZygoteError("fork server exited"))

    def alive(self) -> bool:
        return self._popen is not None and self._popen.poll() is None and self._sock is not None

    async def fork(self, cfg: dict[str, Any], req_r: int,
                   res_w: int) -> tuple[int, int, asyncio.Future[bool]]:
        """Fork a child owning the two pipe ends; returns (pid, pidfd, reaped), where
        `reaped` becomes True once the zygote has reaped the child (False if the
        zygote is gone before it could)."""
        if not self.alive():
            if self._starting is None:
                self._starting = asyncio.Lock()
            async with self._starting:
                if not self.alive():
                    log.warning("fork server gone, restarting it")
                    await self.stop()
                    await self.start()
        assert self._sock is not None
        self._next_id += 1
        ident = self._next_id
        fut: asyncio.Future[tuple[dict[str, Any], list[int]]] = \
            asyncio.get_running_loop().create_future()
        self._replies[ident] = fut
        try:
            socket.send_fds(self._sock, [json.dumps({**cfg, "id": ident}).encode()],
                            [req_r, res_w])
            reply, fds = await asyncio.wait_for(fut, _REPLY_TIMEOUT)
        except TimeoutError as exc:
            raise ZygoteError("fork server did not answer") from exc
        except OSError as exc:
            raise ZygoteError(f"fork server unreachable: {exc}") from exc
        finally:
            self._replies.pop(ident, None)
        if "error" in reply or not fds or type(reply.get("pid")) is not int:
            for fd in fds:
                os.close(fd)
            raise ZygoteError(f"fork server could not fork: {reply.get('error', reply)}")
        pid = reply["pid"]
        # A pid is reused only after its reap notice, which came before this reply.
        return pid, fds[0], self._reaped[pid]

    async def stop(self) -> None:
        if self._sock is not None:
            with contextlib.suppress(ValueError, OSError, RuntimeError):
                asyncio.get_running_loop().remove_reader(self._sock.fileno())
            self._sock.close()
            self._sock = None
        self._lost()
        if self._popen is not None:
            # Polled rather than waited on a thread: close() must also work while the
            # interpreter is shutting down, when no new thread can start.
            loop = asyncio.get_running_loop()
            give_up = loop.time() + 2.0
            while self._popen.poll() is None and loop.time() < give_up:
                await asyncio.sleep(0.005)
            if self._popen.poll() is None:
                self._popen.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._popen.wait(2.0)
            self._popen = None


class ForkSandbox(BaseSandbox):
    """A hash secret is fixed when an interpreter starts, so each hash seed a batch
    asks for has a zygote of its own, started on first use. Beyond `MAX_HASH_SEEDS`,
    the least recently used ones that are not forking are stopped (the children they
    forked run on; their reaping is then watched by pid)."""

    mode = "fork"

    def __init__(self, *, accept_weak: bool = False, python: str | None = None,
                 pool_size: int = POOL_SIZE, prestart: Sequence[int] | None = None) -> None:
        super().__init__(accept_weak=accept_weak, python=python, pool_size=pool_size)
        # The hash seeds whose fork servers start with the sandbox (others on first use).
        self.prestart = tuple(MATCH_HASH_SEEDS if prestart is None else prestart)
        self.zygote: Zygote | None = None  # the one with no fixed hash seed
        self._seeded: OrderedDict[int, Zygote] = OrderedDict()
        self._starting_seed: dict[int, asyncio.Lock] = {}
        self._forking: Counter[int | None] = Counter()
        self._own_starting: asyncio.Lock | None = None

    @property
    def first_seed(self) -> int | None:
        # A sandbox for one hash seed (one match) needs no fork server of its own seed.
        return self.prestart[0] if len(self.prestart) == 1 else None

    async def _start_mode(self) -> None:
        if self.first_seed is not None:
            await self._prestart(self.first_seed)
            if self.first_seed not in self._seeded:
                raise ZygoteError("fork server did not start")
            return
        await self._own_zygote()
        # The seeds matches use are started meanwhile, so no match waits for one.
        for seed in self.prestart:
            task = asyncio.ensure_future(self._prestart(seed))
            self._cleanups.add(task)
            task.add_done_callback(self._cleanups.discard)

    async def _own_zygote(self) -> Zygote:
        """The fork server of no fixed hash seed, started on first use."""
        if self._own_starting is None:
            self._own_starting = asyncio.Lock()
        async with self._own_starting:
            if self.zygote is None:
                zygote = Zygote(self.python, self._work)
                await zygote.start()
                self.zygote = zygote
        return self.zygote

    async def _prestart(self, hash_seed: int) -> None:
        try:
            await self._zygote_for(hash_seed)
        except Exception as exc:  # started again on first use
            log.warning("starting a fork server failed", hash_seed=hash_seed, error=str(exc))
        else:
            self._forking[hash_seed] -= 1
            if not self._forking[hash_seed]:
                del self._forking[hash_seed]

    def helper_cpu_seconds(self) -> float:
        """CPU of the running fork servers and of the children they reaped, for benchmarks."""
        return sum(z.cpu_seconds() for z in [self.zygote, *self._seeded.values()] if z)

    async def _close_mode(self) -> None:
        zygotes = list(self._seeded.values())
        self._seeded.clear()
        for zygote in zygotes:
            await zygote.stop()
        if self.zygote is not None:
            await self.zygote.stop()
            self.zygote = None

    async def _zygote_for(self, hash_seed: int | None) -> Zygote:
        """The zygote for `hash_seed`, counted as forking until `_forking` is lowered."""
        if hash_seed is None:
            zygote = self.zygote if self.zygote is not None else await self._own_zygote()
        else:
            zygote = self._seeded.get(hash_seed)
            if zygote is None:
                lock = self._starting_seed.setdefault(hash_seed, asyncio.Lock())
                async with lock:
                    zygote = self._seeded.get(hash_seed)
                    if zygote is None:
                        zygote = Zygote(self.python, self._work, hash_seed)
                        await zygote.start()
                        self._seeded[hash_seed] = zygote
                self._starting_seed.pop(hash_seed, None)
            self._seeded.move_to_end(hash_seed)
        self._forking[hash_seed] += 1  # before any is stopped: this one is in use
        self._stop_idle_zygotes()
        return zygote

    def _stop_idle_zygotes(self) -> None:
        extra = len(self._seeded) - MAX_HASH_SEEDS
        for seed in list(self._seeded):
            if extra <= 0:
                return
            if self._forking[seed] == 0:
                task = asyncio.ensure_future(self._seeded.pop(seed).stop())
                self._cleanups.add(task)
                task.add_done_callback(self._cleanups.discard)
                extra -= 1

    async def _launch(self, cfg: dict[str, Any], groups: UidGroups | None,
                      limits: Limits, hash_seed: int | None) -> ChildProcess | None:
        zygote = await self._zygote_for(hash_seed)
        try:
            return await self._fork(zygote, cfg, limits, groups)
        finally:
            self._forking[hash_seed] -= 1
            if not self._forking[hash_seed]:
                del self._forking[hash_seed]

    async def _fork(self, zygote: Zygote, cfg: dict[str, Any], limits: Limits,
                    groups: UidGroups | None) -> ChildProcess:
        req_r, req_w = os.pipe2(os.O_CLOEXEC)
        res_r, res_w = os.pipe2(os.O_CLOEXEC)
        try:
            pid, pidfd, reaped = await zygote.fork(cfg, req_r, res_w)
        except BaseException:
            os.close(req_w)
            os.close(res_r)
            raise
        finally:
            os.close(req_r)
            os.close(res_w)
        reader = LineReader(res_r, max_line=limits.max_result_line_bytes,
                            max_total=limits.max_result_bytes)
        return ChildProcess(pid=pid, pidfd=pidfd, reader=reader, writer=PipeWriter(req_w),
                            groups=groups, reaped=reaped)
