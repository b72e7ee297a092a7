"""The Ray executor: one match per Ray task, on a local Ray instance or a cluster.

A task plays its match into a scratch folder on whichever machine runs it and
returns the replay's bytes; the driver writes them under the night's folder. So
workers need the package and the pack, but no shared filesystem, and the
night's folder is only ever written from one place. Ray's own task retries are
off: the shared retry-once-then-void rule applies, as with the local executor.
"""

from __future__ import annotations

import asyncio
import tempfile
from pathlib import Path
from typing import Any

from cogolf.league.jobs import MatchJob
from cogolf.league.play import play_match


class RayUnavailable(RuntimeError):
    """Ray is not installed, or the cluster cannot be reached."""


def play_in_scratch(job: MatchJob) -> bytes:
    """The body of one Ray task: play the match, hand back its replay."""
    with tempfile.TemporaryDirectory(prefix="cogolf-league-") as scratch:
        path = asyncio.run(play_match(job, Path(scratch)))
        return path.read_bytes()


class RayAttempt:
    """An `Attempt` that runs the match as a Ray task. Use as a context manager: it
    starts (or connects to) Ray on entry and disconnects on exit."""

    def __init__(self, address: str | None, local_cpus: int) -> None:
        self.address = address
        self.local_cpus = local_cpus
        self._ray: Any = None
        self._task: Any = None

    def __enter__(self) -> RayAttempt:
        try:
            import ray
        except ImportError:
            raise RayUnavailable(
                "executor = \"ray\" needs Ray: pip install 'cogolf[ray]'"
            ) from None
        options: dict[str, Any] = {
            "ignore_reinit_error": True,
            "include_dashboard": False,
            "log_to_driver": False,
        }
        if self.address:
            options["address"] = self.address
        else:
            options["num_cpus"] = self.local_cpus
        try:
            ray.init(**options)
        except Exception as exc:  # Ray raises many kinds of errors for an unreachable cluster
            raise RayUnavailable(f"cannot start or reach Ray: {type(exc).__name__}: {exc}") from exc
        self._ray = ray
        self._task = ray.remote(max_retries=0, num_cpus=1)(play_in_scratch)
        return self

    def __exit__(self, *exc: object) -> None:
        if self._ray is not None:
            self._ray.shutdown()
            self._ray = None

    async def __call__(self, job: MatchJob, replays_dir: Path) -> Path:
        if self._task is None:
            raise RayUnavailable("RayAttempt used outside its `with` block")
        ref = self._task.remote(job)
        data: bytes = await asyncio.wrap_future(ref.future())
        path = Path(replays_dir) / job.replay_name
        path.parent.mkdir(parents=True, exist_ok=True)
        tmp = path.with_suffix(".part")
        tmp.write_bytes(data)
        tmp.replace(path)
        return path
