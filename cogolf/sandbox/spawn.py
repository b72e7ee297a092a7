"""Spawn-per-batch mode: a fresh interpreter for every batch.

The simple, hardened baseline: each batch starts the real interpreter on the
child runner, which puts up every wall (including its own namespaces) on itself.
Kept beside the fork server so both can be compared and tested.
"""

from __future__ import annotations

import json
import os
import subprocess
from typing import Any

from cogolf.sandbox.api import Limits
from cogolf.sandbox.base import BaseSandbox
from cogolf.sandbox.cgroups import UidGroups
from cogolf.sandbox.channel import LineReader, PipeWriter
from cogolf.sandbox.interpreter import child_argv, child_env
from cogolf.sandbox.session import ChildProcess


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
            popen = subprocess.Popen(
                child_argv(self.python, "spawn", json.dumps(cfg)),
                stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL,
                pass_fds=(req_r, res_w), close_fds=True, start_new_session=True,
                env=child_env(hash_seed), cwd=cfg["cwd"],
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
