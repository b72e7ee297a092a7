"""Spawn-per-batch mode: a fresh interpreter for every batch.

The simple, hardened baseline: each batch starts the real interpreter on the
child runner, which puts up every wall (including its own namespaces and root) on
itself. The one wall it cannot put up on itself is its PID namespace (a process
never changes its own): the server starts it as the first process of a new one.
Kept beside the fork server so both can be compared and tested.
"""

from __future__ import annotations

import contextlib
import json
import os
import subprocess
from collections.abc import Iterator
from typing import Any

from cogolf.sandbox import kernel
from cogolf.sandbox.api import Limits
from cogolf.sandbox.base import BaseSandbox
from cogolf.sandbox.cgroups import UidGroups
from cogolf.sandbox.channel import LineReader, PipeWriter
from cogolf.sandbox.interpreter import child_argv, child_env
from cogolf.sandbox.session import ChildProcess


@contextlib.contextmanager
def _own_pid_namespace() -> Iterator[None]:
    """Within the block, the process this thread starts is pid 1 of a new PID namespace.

    The setting belongs to the calling thread alone (other threads fork as before),
    and is undone before the block ends. Without root it does nothing, and the child
    reports its PID namespace missing.
    """
    if os.geteuid() != 0:
        yield
        return
    own = kernel.pid_namespace_fd()
    try:
        kernel.children_in_new_pid_namespace()
        try:
            yield
        finally:
            kernel.children_in_own_pid_namespace(own)
    finally:
        os.close(own)


class SpawnSandbox(BaseSandbox):
    mode = "spawn"

    def __init__(self, *, accept_weak: bool = False, python: str | None = None,
                 pool_size: int = 0) -> None:
        # No pre-started interpreters: this mode is the spawn-per-batch baseline.
        super().__init__(accept_weak=accept_weak, python=python, pool_size=pool_size)

    async def _launch(self, cfg: dict[str, Any], groups: UidGroups | None,
                      limits: Limits, hash_seed: int | None) -> ChildProcess | None:
        req_r, req_w = os.pipe2(os.O_CLOEXEC)
        res_r, res_w = os.pipe2(os.O_CLOEXEC)
        try:
            cfg = {**cfg, "req_fd": req_r, "res_fd": res_w}
            with _own_pid_namespace():
                popen = subprocess.Popen(
                    child_argv(self.python, "spawn", json.dumps(cfg)),
                    stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                    stderr=subprocess.DEVNULL, pass_fds=(req_r, res_w), close_fds=True,
                    start_new_session=True, env=child_env(hash_seed), cwd=cfg["cwd"],
                )
        except OSError:
            for fd in (req_w, res_r):
                os.close(fd)
            return None
        finally:
            os.close(req_r)
            os.close(res_w)
        pidfd = os.pidfd_open(popen.pid)
        reader = LineReader(res_r, max_line=limits.max_result_line_bytes,
                            max_total=limits.max_result_bytes)
        return ChildProcess(pid=popen.pid, pidfd=pidfd, reader=reader, writer=PipeWriter(req_w),
                            groups=groups, popen=popen)
