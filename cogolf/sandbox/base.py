"""What the spawn and fork sandboxes share: start-up checks, leases, one batch's frame.

Both modes run the same session over the same walls; they differ only in how a
walled child comes to exist. Start-up runs a probe batch and reads which walls
the child could put up; a missing wall is refused unless the operator accepted a
weaker sandbox, and is then announced loudly.
"""

from __future__ import annotations

import asyncio
import contextlib
import math
import os
import shutil
import tempfile
import time
from collections.abc import Sequence
from typing import Any

import structlog

from cogolf.sandbox.api import DEFAULT_LIMITS, BatchResult, Limits, LoadStatus
from cogolf.sandbox.cgroups import UidGroups, available_bases
from cogolf.sandbox.interpreter import real_python
from cogolf.sandbox.session import ChildProcess, harness_error, run_session
from cogolf.sandbox.uids import lease_uid

log = structlog.get_logger(__name__)

PROBE_SOURCE = "def solve():\n    return 1\n"
GROUP_PREFIX = "py"
PY_CONTROLLERS = ("pids", "memory")  # CPU comes from /proc: one task per child


class WeakSandboxError(RuntimeError):
    """Some kernel wall is missing on this machine and weak sandboxes were not accepted."""

    def __init__(self, missing: dict[str, str]) -> None:
        detail = "; ".join(f"{k}: {v}" for k, v in sorted(missing.items()))
        super().__init__(
            f"sandbox walls missing ({detail}); refusing to run untrusted programs "
            "(pass --accept-weak-sandbox to run anyway)"
        )
        self.missing = missing


def missing_walls(walls: dict[str, str]) -> dict[str, str]:
    return {k: v for k, v in walls.items() if v.startswith("missing")}


class BaseSandbox:
    mode = "base"

    def __init__(self, *, accept_weak: bool = False, python: str | None = None) -> None:
        self.accept_weak = accept_weak
        self._python_override = python
        self.python = ""
        self.walls: dict[str, str] = {}
        self._bases: dict[str, str] = {}
        self._work = ""
        self._started = False
        self._cleanups: set[asyncio.Future[None]] = set()
        self._configured: dict[int, int] = {}  # uid -> memory limit written to its group

    # --- lifecycle -------------------------------------------------------------

    async def start(self) -> None:
        if self._started:
            return
        self.python = self._python_override or real_python()
        self._bases = available_bases(PY_CONTROLLERS) if os.geteuid() == 0 else {}
        self._work = tempfile.mkdtemp(prefix="cogolf-sandbox-")
        os.chmod(self._work, 0o711)
        await self._start_mode()
        self._started = True
        probe = await self._batch(PROBE_SOURCE, [[]], "solve", DEFAULT_LIMITS, strict=False)
        if probe.load is LoadStatus.HARNESS_ERROR:
            await self.close()
            raise RuntimeError(f"sandbox ({self.mode}) cannot start: {probe.load_detail}")
        missing = missing_walls(self.walls)
        if missing:
            if not self.accept_weak:
                await self.close()
                raise WeakSandboxError(missing)
            log.warning("WEAK SANDBOX: walls missing, running anyway as requested",
                        mode=self.mode, missing=missing)
        log.info("sandbox ready", mode=self.mode, walls=self.walls)

    async def close(self) -> None:
        await self.drain()
        await self._close_mode()
        if self._work:
            shutil.rmtree(self._work, ignore_errors=True)
            self._work = ""
        self._started = False

    async def _start_mode(self) -> None:
        return None

    async def _close_mode(self) -> None:
        return None

    # --- batches ---------------------------------------------------------------

    async def run_batch(
        self,
        source: str,
        calls: Sequence[list[Any]],
        *,
        function: str = "solve",
        limits: Limits = DEFAULT_LIMITS,
        label: str = "",
    ) -> BatchResult:
        started = time.monotonic()
        if not self._started:
            return harness_error(len(calls), "sandbox not started", started)
        try:
            result = await self._batch(source, calls, function, limits,
                                       strict=not self.accept_weak)
        except Exception as exc:  # the sandbox's own failure, never the program's
            log.exception("sandbox batch failed", mode=self.mode, label=label)
            return harness_error(len(calls), f"{type(exc).__name__}: {exc}", started)
        if result.load is LoadStatus.HARNESS_ERROR:
            log.error("sandbox harness error", mode=self.mode, label=label,
                      detail=result.load_detail)
        return result

    async def diagnose(self, source: str, calls: Sequence[list[Any]]) -> BatchResult:
        """A batch with the audit hook off, so `cogolf doctor` tests the kernel walls alone."""
        return await self._batch(source, calls, "solve", DEFAULT_LIMITS, strict=False,
                                 audit_hook=False)

    async def _batch(self, source: str, calls: Sequence[list[Any]], function: str,
                     limits: Limits, *, strict: bool, audit_hook: bool = True) -> BatchResult:
        started = time.monotonic()
        held = contextlib.ExitStack()
        uid = held.enter_context(lease_uid())
        cwd = ""
        child: ChildProcess | None = None
        try:
            groups = self._groups(uid, limits)
            cwd = tempfile.mkdtemp(dir=self._work)
            cfg = {
                "uid": uid if os.geteuid() == 0 else None,
                "cgroups": groups.join_paths() if groups else [],
                "cwd": cwd,
                "memory": limits.memory_bytes,
                "cpu_backstop": math.ceil(limits.load_cpu_seconds
                                          + len(calls) * limits.cpu_seconds_per_call) + 2,
                "strict": strict,
                "audit_hook": audit_hook,
            }
            child = await self._launch(cfg, groups, limits)
            if child is None:
                return harness_error(len(calls), "sandbox child could not be started", started)
            result = await run_session(child, source, calls, function=function,
                                       limits=limits, started=started, strict=strict)
            if child.walls:
                self.walls = child.walls
            return result
        finally:
            # The kill is immediate; waiting for the exit, freeing the uid and removing
            # the directory happen after the result is handed back.
            if child is not None:
                child.kill()
            task = asyncio.ensure_future(self._cleanup(child, cwd, held))
            self._cleanups.add(task)
            task.add_done_callback(self._cleanups.discard)

    def _groups(self, uid: int, limits: Limits) -> UidGroups | None:
        if not self._bases:
            return None
        groups = UidGroups.create(uid, self._bases, GROUP_PREFIX)
        if self._configured.get(uid) != limits.memory_bytes:
            groups.configure(max_tasks=1, memory_bytes=limits.memory_bytes)
            self._configured[uid] = limits.memory_bytes
        return groups

    async def _cleanup(self, child: ChildProcess | None, cwd: str,
                       held: contextlib.ExitStack) -> None:
        with held:  # the uid lease ends only once the child is gone
            if child is not None:
                try:
                    await child.kill_and_reap()
                finally:
                    child.close()
            if cwd:
                with contextlib.suppress(OSError):
                    os.rmdir(cwd)
                if os.path.exists(cwd):
                    log.error("sandbox working directory not empty", path=cwd)
                    shutil.rmtree(cwd, ignore_errors=True)

    async def drain(self) -> None:
        """Wait until every child of finished batches is dead and reaped."""
        while self._cleanups:
            await asyncio.gather(*list(self._cleanups), return_exceptions=True)

    async def _launch(self, cfg: dict[str, Any], groups: UidGroups | None,
                      limits: Limits) -> ChildProcess | None:
        raise NotImplementedError

    def describe(self) -> dict[str, Any]:
        return {
            "mode": self.mode,
            "python": self.python,
            "walls": dict(self.walls),
            "weak": bool(missing_walls(self.walls)),
            "accept_weak": self.accept_weak,
        }
