"""Several attempts of one agent on one task: independent, in parallel up to `parallel`,
resumable per attempt, each harness error retried once and then recorded as void.

Each attempt has its own fresh workspace, scratch folder, uid and gateway token, so no
file, note or cache passes between attempts. A finished attempt (its result file reads
back with a status other than harness_error) is never run again; one that was cut off
half-way left no result and is run again from scratch.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, Protocol

from cogolf.agents import shared
from cogolf.agents.attempt import HARNESS_ERROR, run_attempt
from cogolf.agents.gateway import Gateway
from cogolf.agents.spec import AgentSpec
from cogolf.game import AgentTask, JobFault
from cogolf.nightfiles import write_json

TRIES = 2
VOID_SUFFIX = ".void.json"


def finished(path: Path) -> dict[str, Any] | None:
    """The result at `path` when it is a finished attempt's, else None."""
    try:
        doc = json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return None
    agent = doc.get("agent") if isinstance(doc, dict) else None
    if not isinstance(agent, dict) or agent.get("status") in (None, HARNESS_ERROR):
        return None
    return doc


async def play(task: AgentTask, spec: AgentSpec, gateway: Gateway, out_dir: Path, *,
               entrant: str, attempt: int) -> tuple[dict[str, Any] | None, str]:
    """(the attempt's result, written; None when void) and the void's cause."""
    name = task.result_name(entrant, attempt)
    cause = ""
    for _ in range(TRIES):
        try:
            doc = await run_attempt(task, spec, gateway, out_dir, entrant=entrant,
                                    attempt=attempt)
        except Exception as exc:  # whatever breaks the harness voids the attempt, never the run
            cause = f"{type(exc).__name__}: {exc}"[:500]
            continue
        if doc["agent"]["status"] != HARNESS_ERROR:
            write_json(out_dir / name, doc)
            (out_dir / (name.removesuffix(".json") + VOID_SUFFIX)).unlink(missing_ok=True)
            return doc, ""
        cause = str(doc["agent"].get("error") or "harness error")
    write_json(out_dir / (name.removesuffix(".json") + VOID_SUFFIX),
               {"task": task.name, "entrant": entrant, "attempt": attempt, "status": "void",
                "cause": cause, "tries": TRIES})
    return None, cause


async def night_attempt(task: AgentTask, spec: AgentSpec, path: Path, *, entrant: str,
                        attempt: int, gateway: Gateway) -> str:
    """A league night's job played by the entrant's agent: the result at `path` (its
    patch and transcript beside it); a harness error is a JobFault (retried, then void)."""
    doc = await run_attempt(task, spec, gateway, path.parent, entrant=entrant, attempt=attempt)
    a = doc["agent"]
    if a["status"] == HARNESS_ERROR:
        raise JobFault(f"harness error: {a.get('error') or 'the provider failed'}"[:300])
    write_json(path, doc)
    cost = "" if a["cost"] is None else f", cost {a['cost']:.4f}"
    return (f"agent {a['status']}, {a['points']:g} point(s), "
            f"{a['input_tokens'] + a['output_tokens']} tokens{cost}, {a['seconds']:.0f} s")


class AgentRunner(Protocol):
    """Where a league night's agent attempts run: this process (`LocalAgents`) or a Ray
    worker (`cogolf.league.ray_agents`). A call plays one attempt into `path` (its patch
    and transcript beside it) and returns its one-line summary; a harness error is a
    JobFault."""

    bounded: bool  # True: it bounds its attempts at once itself (Ray: one per worker)

    async def __call__(self, task: AgentTask, spec: AgentSpec, path: Path, *, entrant: str,
                       attempt: int) -> str: ...

    def close(self) -> None: ...


class LocalAgents:
    """Agent attempts in this process, through its gateway (started with the first one)."""

    bounded = False  # the night's `parallel` bounds them

    def __init__(self) -> None:
        self.gateway: Gateway | None = None

    async def __call__(self, task: AgentTask, spec: AgentSpec, path: Path, *, entrant: str,
                       attempt: int) -> str:
        self.gateway = self.gateway or shared.acquire()
        return await night_attempt(task, spec, path, entrant=entrant, attempt=attempt,
                                   gateway=self.gateway)

    def close(self) -> None:
        if self.gateway is not None:
            shared.release()
            self.gateway = None


async def run_attempts(task: AgentTask, spec: AgentSpec, out_dir: Path, *, attempts: int,
                       parallel: int, entrant: str, gateway: Gateway | None = None,
                       report: Callable[[int, dict[str, Any] | None, str], None] = (
                           lambda n, doc, cause: None)) -> list[dict[str, Any] | None]:
    """Every attempt's result (None: void), in attempt order; `report` is called as each
    one ends (kept ones first)."""
    out_dir.mkdir(parents=True, exist_ok=True)
    own = gateway is None
    gw = gateway or Gateway().start()
    gate = asyncio.Semaphore(max(1, parallel))
    results: dict[int, dict[str, Any] | None] = {}

    async def one(n: int) -> None:
        kept = finished(out_dir / task.result_name(entrant, n))
        if kept is not None:
            results[n] = kept
            report(n, kept, "kept")
            return
        async with gate:
            doc, cause = await play(task, spec, gw, out_dir, entrant=entrant, attempt=n)
        results[n] = doc
        report(n, doc, cause)

    try:
        await asyncio.gather(*(one(n) for n in range(1, attempts + 1)))
    finally:
        if own:
            gw.stop()
    return [results[n] for n in range(1, attempts + 1)]
