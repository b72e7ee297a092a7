"""A Ray night's agent attempts: each one a task on a free Ray worker, its files brought back.

An attempt runs exactly as on the driver (`agents.runs.night_attempt`), in a scratch
folder of the worker, through the worker's one model gateway (shared with its LLM
seats): the real key is read from the worker's own environment and never leaves that
process, as on the driver. What the attempt wrote (its result, its patch, its
transcript) comes back as bytes and is written by the driver into the night's folder
under names the driver makes itself: a worker names no file of the driver's. The
result is written last, so a worker lost mid-attempt leaves nothing the resume would
keep, and the attempt is run again from scratch; a finished one is never sent again
(the driver keeps it, signed, as every solo result).
"""

from __future__ import annotations

import os
import shutil
import socket
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cogolf.agents.attempt import TRANSCRIPTS_DIR
from cogolf.agents.gateway import Gateway
from cogolf.agents.runs import night_attempt
from cogolf.agents.spec import AgentSpec
from cogolf.game import AgentTask, JobFault
from cogolf.nightfiles import write_bytes

if TYPE_CHECKING:
    from cogolf.league.ray_executor import RayAttempt

PATCH_SUFFIX = ".patch"
TRANSCRIPT_SUFFIX = ".ndjson"
MAX_CAUSE = 500


@dataclass(frozen=True)
class AgentJob:
    """One attempt, as sent to a worker: the task and agent are plain data; the task's
    files must be at the same paths on the worker's machine (as the pack is)."""

    task: AgentTask
    spec: AgentSpec
    name: str  # the result file's name
    entrant: str
    attempt: int


@dataclass(frozen=True)
class AgentBack:
    """What a worker sends back of one attempt."""

    summary: str | None  # None: the attempt failed (`fault`)
    fault: str = ""
    retry: bool = True
    result: bytes | None = None
    patch: bytes | None = None
    transcript: bytes | None = None


def _read(path: Path) -> bytes | None:
    try:
        return path.read_bytes()
    except OSError:
        return None


async def play_on_worker(job: AgentJob, scratch: Path, gateway: Gateway) -> AgentBack:
    """The worker's side: play the attempt in a folder of its own, read back its files."""
    out = Path(tempfile.mkdtemp(prefix="agent-", dir=scratch))
    stem = job.name.removesuffix(".json")
    path, patch = out / job.name, out / (stem + PATCH_SUFFIX)
    transcript = out / TRANSCRIPTS_DIR / (stem + TRANSCRIPT_SUFFIX)
    try:
        try:
            summary = await night_attempt(job.task, job.spec, path, entrant=job.entrant,
                                          attempt=job.attempt, gateway=gateway)
        except JobFault as exc:
            return AgentBack(None, exc.cause, exc.retry, transcript=_read(transcript))
        except Exception as exc:  # e.g. a task folder that is not on this worker's machine
            cause = f"on Ray worker {socket.gethostname()}: {type(exc).__name__}: {exc}"
            return AgentBack(None, cause[:MAX_CAUSE])
        return AgentBack(summary, result=path.read_bytes(), patch=_read(patch),
                         transcript=_read(transcript))
    finally:
        shutil.rmtree(out, ignore_errors=True)


def write_private(path: Path, data: bytes) -> None:
    """A transcript: 0600 in a 0700 folder, atomically, never through a link."""
    path.parent.mkdir(mode=0o700, parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW | os.O_CLOEXEC,
                 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(data)
    os.replace(tmp, path)


def bring_back(back: AgentBack, path: Path) -> str:
    """The driver's side: the attempt's files into the night's folder, the result last."""
    stem = path.name.removesuffix(".json")
    if back.transcript is not None:
        write_private(path.parent / TRANSCRIPTS_DIR / (stem + TRANSCRIPT_SUFFIX), back.transcript)
    if back.summary is None or back.result is None:
        raise JobFault(back.fault or "the Ray worker sent no result", retry=back.retry)
    patch = path.parent / (stem + PATCH_SUFFIX)
    if back.patch is not None:
        write_bytes(patch, back.patch)
    else:
        patch.unlink(missing_ok=True)
    write_bytes(path, back.result)
    return back.summary


class RayAgents:
    """The `AgentRunner` of a Ray night: each attempt on whichever worker is free."""

    bounded = True  # one attempt per worker at once, however many the cluster has

    def __init__(self, ray: RayAttempt) -> None:
        self.ray = ray

    async def __call__(self, task: AgentTask, spec: AgentSpec, path: Path, *, entrant: str,
                       attempt: int) -> str:
        job = AgentJob(task, spec, path.name, entrant, attempt)
        back: Any = await self.ray.on_worker(lambda worker: worker.agent.remote(job))
        return bring_back(back, path)

    def close(self) -> None:
        return None  # the workers, and their gateways, stop with the `RayAttempt`
