"""Stopping a supervisor of walled programs (a bot's launcher) so its walls end too.

A launcher holds its bot's uid lease and ends the bot's whole cgroup when it is
asked to stop (SIGTERM) or when its own parent dies. SIGKILL, which the runner
used to send, ends the launcher and nothing of the bot: the double-forked
daemons a bot left ran on. So a runner asks first, waits a little, and only then
kills; a launcher that had to be killed (or was killed by someone else) dropped
its lease unclean, and the sweep of unleased uids ends what it left.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal

from cogolf.sandbox.uids import sweep_unleased

TERM_GRACE = 3.0
"""Seconds a launcher has, once asked, to end its bot's cgroup and exit."""


async def stop_process(proc: asyncio.subprocess.Process, grace: float = TERM_GRACE) -> int:
    """SIGTERM `proc`; after `grace` seconds SIGKILL its process group and sweep the
    uids that were left unclean. Returns its exit code."""
    if proc.returncode is None:
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        try:
            return await asyncio.wait_for(proc.wait(), timeout=grace)
        except TimeoutError:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGKILL)
            await proc.wait()
    if proc.returncode == -signal.SIGKILL:
        await asyncio.to_thread(sweep_unleased)
    return proc.returncode if proc.returncode is not None else -1
