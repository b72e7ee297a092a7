"""Fork mode: a small clean interpreter (the zygote) forks one walled child per batch.

The zygote starts once with `-I -S -B`, preloads the modules programs may use,
enters empty network/IPC/UTS/mount namespaces and then only forks. It never sees
a program, a test or a result: the server hands it two pipe ends over a unix
socket, the forked child takes them, puts up its own walls and reads its request
straight from the server. The zygote answers with the child's pid and a pidfd.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import socket
import subprocess
from typing import Any

import structlog

from cogolf.sandbox.api import Limits
from cogolf.sandbox.base import BaseSandbox
from cogolf.sandbox.cgroups import UidGroups
from cogolf.sandbox.channel import LineReader, PipeWriter
from cogolf.sandbox.interpreter import child_argv
from cogolf.sandbox.session import ChildProcess

log = structlog.get_logger(__name__)

_START_TIMEOUT = 10.0
_REPLY_TIMEOUT = 5.0


class ZygoteError(RuntimeError):
    pass


def _wake(fut: asyncio.Future[None]) -> None:
    if not fut.done():
        fut.set_result(None)


class Zygote:
    """The server's end of the fork server."""

    def __init__(self, python: str, cwd: str) -> None:
        self._python = python
        self._cwd = cwd
        self._sock: socket.socket | None = None
        self._popen: subprocess.Popen[bytes] | None = None
        self._lock = asyncio.Lock()
        self._next_id = 0
        self.walls: dict[str, str] = {}

    @property
    def pid(self) -> int | None:
        return self._popen.pid if self._popen else None

    async def start(self) -> None:
        ours, theirs = socket.socketpair(socket.AF_UNIX, socket.SOCK_SEQPACKET)
        try:
            self._popen = subprocess.Popen(
                child_argv(self._python, "zygote", str(theirs.fileno())),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(theirs.fileno(),), close_fds=True, start_new_session=True,
                env={}, cwd=self._cwd,
            )
        finally:
            theirs.close()
        ours.setblocking(False)
        self._sock = ours
        msg, _ = await self._recv(_START_TIMEOUT)
        hello = json.loads(msg)
        self.walls = {str(k): str(v) for k, v in hello.get("walls", {}).items()}
        log.info("zygote started", pid=self._popen.pid, walls=self.walls)

    async def _recv(self, timeout: float) -> tuple[bytes, list[int]]:
        assert self._sock is not None
        loop = asyncio.get_running_loop()
        sock = self._sock
        deadline = loop.time() + timeout
        while True:
            try:
                msg, fds, _flags, _addr = socket.recv_fds(sock, 1 << 16, 2)
            except BlockingIOError:
                ready = loop.create_future()
                loop.add_reader(sock.fileno(), _wake, ready)
                try:
                    await asyncio.wait_for(ready, max(deadline - loop.time(), 0.0))
                except TimeoutError as exc:
                    raise ZygoteError("fork server did not answer") from exc
                finally:
                    loop.remove_reader(sock.fileno())
                continue
            if not msg:
                raise ZygoteError("fork server exited")
            return msg, fds

    def alive(self) -> bool:
        return self._popen is not None and self._popen.poll() is None and self._sock is not None

    async def fork(self, cfg: dict[str, Any], req_r: int,
                   res_w: int) -> tuple[int, int, dict[str, Any]]:
        """Fork a child owning the two pipe ends; returns (pid, pidfd, reply)."""
        async with self._lock:
            if not self.alive():
                await self.stop()
                await self.start()
            assert self._sock is not None
            self._next_id += 1
            payload = json.dumps({**cfg, "id": self._next_id}).encode()
            socket.send_fds(self._sock, [payload], [req_r, res_w])
            msg, fds = await self._recv(_REPLY_TIMEOUT)
        reply = json.loads(msg)
        if reply.get("id") != self._next_id or not fds:
            for fd in fds:
                os.close(fd)
            raise ZygoteError(f"fork server reply out of step: {reply}")
        return int(reply["pid"]), fds[0], reply

    async def stop(self) -> None:
        if self._sock is not None:
            self._sock.close()
            self._sock = None
        if self._popen is not None:
            try:
                await asyncio.to_thread(self._popen.wait, 2.0)
            except subprocess.TimeoutExpired:
                self._popen.kill()
                with contextlib.suppress(subprocess.TimeoutExpired):
                    self._popen.wait(2.0)
            self._popen = None


class ForkSandbox(BaseSandbox):
    mode = "fork"

    def __init__(self, *, accept_weak: bool = False, python: str | None = None) -> None:
        super().__init__(accept_weak=accept_weak, python=python)
        self.zygote: Zygote | None = None

    async def _start_mode(self) -> None:
        self.zygote = Zygote(self.python, self._work)
        await self.zygote.start()

    async def _close_mode(self) -> None:
        if self.zygote is not None:
            await self.zygote.stop()
            self.zygote = None

    async def _launch(self, cfg: dict[str, Any], groups: UidGroups | None,
                      limits: Limits) -> ChildProcess | None:
        assert self.zygote is not None
        req_r, req_w = os.pipe2(os.O_CLOEXEC)
        res_r, res_w = os.pipe2(os.O_CLOEXEC)
        try:
            pid, pidfd, reply = await self.zygote.fork(cfg, req_r, res_w)
        except BaseException:
            os.close(req_w)
            os.close(res_r)
            raise
        finally:
            os.close(req_r)
            os.close(res_w)
        reader = LineReader(res_r, max_line=limits.max_result_line_bytes,
                            max_total=limits.max_result_bytes)
        child = ChildProcess(pid=pid, pidfd=pidfd, reader=reader, writer=PipeWriter(req_w),
                             groups=groups)
        cgroup = str(reply.get("cgroup", "missing: no answer"))
        child.extra_walls["cgroup"] = cgroup if cfg.get("cgroups") else \
            "missing: no cgroup directory"
        return child
