"""One agent attempt, from a fresh workspace to its score.

1. The task's starting files, as new files committed once (`workspace.fresh`); the
   same start is kept apart as the harness's base for the diff.
2. The agent runs walled (`launch`) with a token for this attempt only at the
   gateway, until it exits, its time limit passes or a budget is spent; then its
   whole cgroup is killed, and only then is the workspace read.
3. The diff against the start is the submission, kept as `<result>.patch`; it is
   applied to a clean copy and scored through the game's own path (`AgentTask`).
4. The result is the game's document with an `agent` part: the attempt's status,
   tokens, cost, seconds, turns, exit code and the last 64 KiB of its output.

Statuses: `ok`, `no_change`, `agent_exit:<code>`, `timeout`, `limit:<requests|
tokens|cost>` (the workspace as left is still scored), `bad_patch` (0 points), and
`harness_error` (the sandbox, the gateway or the provider failed: the caller retries
it and voids it if it persists, never a silent 0).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import os
import shutil
import signal
import sys
import time
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import structlog

from cogolf.agents.gateway import Gateway
from cogolf.agents.launch import LOG_CAP, AgentWall, launcher
from cogolf.agents.meter import Meter
from cogolf.agents.spec import AgentSpec
from cogolf.agents.workspace import BadPatch, fresh, snapshot
from cogolf.evaluation.pyenv import shared_tempdir
from cogolf.game import AgentTask
from cogolf.sandbox.cgroups import UidGroups
from cogolf.sandbox.reachable import BotSetupError, bot_python, import_path

log = structlog.get_logger(__name__)

HARNESS_ERROR = "harness_error"
TRANSCRIPTS_DIR = "transcripts"
STOP_GRACE_SECONDS = 15.0
START_SECONDS = 30.0
POLL_SECONDS = 0.05
BASE_PATH = "/usr/local/bin:/usr/bin:/bin"
LIB_DIR, BIN_DIR = "lib", "bin"
TOOLS = ("ruff",)  # this installation's tools an agent may run, linked into its bin/


@dataclass(frozen=True)
class AgentEnd:
    """How the agent's run ended, as the launcher and the gateway saw it."""

    exit_code: int | None
    stopped: str | None  # timeout | limit:<which> | None
    error: str | None  # the harness's own failure
    walled: bool
    seconds: float
    output: str


def harness_notes(spec: AgentSpec, workspace: str) -> str:
    return (
        "\n## How this attempt works\n\n"
        f"You work in `{workspace}` (your current folder), a git repository with one "
        "commit: the task's starting files. When you stop, or at the time limit of "
        f"{spec.time_limit:g} seconds, your changes are taken as the diff against that "
        "commit and scored on a clean copy; test files you edit are restored first, and "
        "a symbolic link anywhere in the workspace voids the submission. Nothing but "
        "the model is reachable on the network. Old output may be shortened as your "
        "context fills.\n")


def tool_links(home: Path) -> tuple[str, ...]:
    """`python`, `python3` and this installation's tools in the agent's `bin/`; returns
    the tools' files, which the walls must let it execute."""
    bin_dir = home / BIN_DIR
    bin_dir.mkdir()
    python = bot_python()
    targets = {"python": python, "python3": python}
    for tool in TOOLS:
        found = shutil.which(tool) or str(Path(sys.executable).parent / tool)
        if os.path.isfile(found):
            targets[tool] = os.path.realpath(found)
    for name, target in targets.items():
        os.symlink(target, bin_dir / name)
    return tuple(sorted({t for t in targets.values() if t != python}))


def agent_env(spec: AgentSpec, task: AgentTask, attempt: int, gateway: Gateway, token: str,
              home: Path, workspace: Path, prompt: Path,
              packages: tuple[str, ...]) -> dict[str, str]:
    env = {
        "PATH": f"{home / BIN_DIR}:{BASE_PATH}",
        "LANG": "C.UTF-8",
        "HOME": str(home),
        "TMPDIR": str(home),
        "PYTHONPATH": ":".join([str(home / LIB_DIR), *packages[1:]]),
        "PYTHONDONTWRITEBYTECODE": "1",
        **dict(spec.env),
        "OPENAI_BASE_URL": gateway.openai_url,
        "OPENAI_API_KEY": token,
        "ANTHROPIC_BASE_URL": gateway.anthropic_url,
        "ANTHROPIC_API_KEY": token,
        "COGOLF_API": spec.llm.provider,
        "COGOLF_MODEL": spec.llm.model,
        "COGOLF_PROMPT_FILE": str(prompt),
        "COGOLF_TASK": task.name,
        "COGOLF_ATTEMPT": str(attempt),
        "COGOLF_WORKSPACE": str(workspace),
    }
    return env


def agent_argv(spec: AgentSpec, gateway: Gateway, prompt: Path, workspace: Path) -> list[str]:
    python = str(Path(prompt).parent / BIN_DIR / "python")
    if spec.builtin:
        return [python, "-P", "-m", "cogolf.agents.builtin", "--prompt", str(prompt),
                "--max-turns", str(spec.max_turns),
                "--command-timeout", f"{spec.command_timeout:g}"]
    fields = {"python": python, "prompt_file": str(prompt), "workspace": str(workspace),
              "openai_base_url": gateway.openai_url, "anthropic_base_url": gateway.anthropic_url,
              "model": spec.llm.model}
    return [a.format(**fields) for a in spec.command]


async def run_agent(spec: AgentSpec, task: AgentTask, gateway: Gateway, meter: Meter,
                    token: str, root: Path, workspace: Path, attempt: int) -> AgentEnd:
    """Run the agent walled until it exits, its time passes or a budget is spent; its
    cgroup is dead when this returns."""
    started = time.monotonic()
    home, out = root / "home", root / "out"
    home.mkdir()
    out.mkdir(mode=0o700)
    try:
        packages = import_path()
        readable = tool_links(home)
    except BotSetupError as exc:
        return AgentEnd(None, None, str(exc), False, 0.0, "")
    (home / LIB_DIR).mkdir()
    os.symlink(packages[0], home / LIB_DIR / "cogolf")
    prompt = home / "prompt.md"
    prompt.write_text(task.prompt() + harness_notes(spec, str(workspace)), encoding="utf-8")
    env = agent_env(spec, task, attempt, gateway, token, home, workspace, prompt, packages)
    wall = AgentWall(workspace=str(workspace), scratch=str(home), log=str(out / "agent.log"),
                     port=gateway.port, readable=(*packages, *readable, *spec.readable),
                     env=tuple(env.items()), max_processes=spec.max_processes,
                     memory_bytes=spec.memory_mb << 20)
    proc = await asyncio.create_subprocess_exec(
        *launcher(agent_argv(spec, gateway, prompt, workspace), wall),
        stdin=asyncio.subprocess.DEVNULL, stdout=asyncio.subprocess.PIPE,
        stderr=asyncio.subprocess.PIPE, start_new_session=True)
    assert proc.stdout is not None and proc.stderr is not None
    groups: UidGroups | None = None
    try:
        first = await asyncio.wait_for(proc.stdout.readline(), START_SECONDS)
        dirs = json.loads(first)["cgroups"]
        groups = UidGroups({str(i): d for i, d in enumerate(dirs)}) if dirs else None
    except (TimeoutError, ValueError, KeyError, TypeError):
        first = b""
    stopped = None
    deadline = started + spec.time_limit
    waiting = asyncio.ensure_future(proc.wait())
    while first and not waiting.done():
        await asyncio.wait([waiting], timeout=POLL_SECONDS)
        if waiting.done():
            break
        if meter.limit is not None:
            stopped = f"limit:{meter.limit}"
        elif time.monotonic() > deadline:
            stopped = "timeout"
        else:
            continue
        break
    if not waiting.done():
        with contextlib.suppress(ProcessLookupError):
            proc.send_signal(signal.SIGTERM)
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(asyncio.shield(waiting), STOP_GRACE_SECONDS)
    if not waiting.done():
        with contextlib.suppress(ProcessLookupError):
            os.killpg(proc.pid, signal.SIGKILL)
        await waiting
    for _ in range(500):  # the launcher is gone: nothing of the agent may outlive it
        if groups is None or not groups.kill_all():
            break
        await asyncio.sleep(0.01)
    lines = (await proc.stdout.read()).decode("utf-8", "replace").splitlines()
    errors = (await proc.stderr.read(4096)).decode("utf-8", "replace").strip()
    report: dict[str, Any] = {}
    with contextlib.suppress(ValueError, IndexError):
        report = json.loads(lines[-1])
    output = _tail(out / "agent.log")
    seconds = round(time.monotonic() - started, 3)
    if not report.get("started"):
        error = report.get("error") or errors[-500:] or "the launcher did not report"
        return AgentEnd(None, stopped, f"the agent could not start: {error}",
                        bool(report.get("walled")), seconds, output)
    if report.get("left"):
        return AgentEnd(report.get("exit"), stopped,
                        f"{report['left']} task(s) of the agent outlived its cgroup's kill",
                        bool(report.get("walled")), seconds, output)
    if stopped is None and meter.limit is not None:  # refused just as it exited
        stopped = f"limit:{meter.limit}"
    return AgentEnd(report.get("exit"), stopped, None, bool(report.get("walled")), seconds,
                    output)


def _tail(path: Path) -> str:
    try:
        with open(path, "rb") as f:
            f.seek(0, os.SEEK_END)
            f.seek(max(0, f.tell() - LOG_CAP))
            return f.read(LOG_CAP).decode("utf-8", "replace")
    except OSError:
        return ""


def status_of(end: AgentEnd, meter: Meter, patch_error: str | None, changed: bool) -> str:
    if end.error is not None:
        return HARNESS_ERROR
    if end.stopped is not None:
        return end.stopped
    if end.exit_code not in (0, None) and meter.provider_failures and meter.last_failed:
        return HARNESS_ERROR  # the provider failed and the agent gave up on it
    if patch_error is not None:
        return "bad_patch"
    if end.exit_code != 0:
        return f"agent_exit:{end.exit_code}"
    return "ok" if changed else "no_change"


async def run_attempt(task: AgentTask, spec: AgentSpec, gateway: Gateway, out_dir: Path, *,
                      entrant: str, attempt: int) -> dict[str, Any]:
    """Play one attempt; its result document (not yet written), patch and transcript in
    `out_dir`. The status is in `doc["agent"]["status"]`."""
    name = task.result_name(entrant, attempt)
    stem = name.removesuffix(".json")
    out_dir.mkdir(parents=True, exist_ok=True)
    transcripts = out_dir / TRANSCRIPTS_DIR
    transcripts.mkdir(mode=0o700, exist_ok=True)
    patch = out_dir / f"{stem}.patch"
    meter = Meter(spec.budget, spec.prices)
    token = gateway.grant(spec.llm, meter, transcripts / f"{stem}.ndjson", label=stem)
    with shared_tempdir("cogolf-agent-") as tmp:
        root = Path(tmp)
        base, workspace = root / "base", root / "workspace"
        task.workspace(base)
        os.chmod(base, 0o700)
        fresh(base, workspace)
        try:
            end = await run_agent(spec, task, gateway, meter, token, root, workspace, attempt)
        finally:
            gateway.revoke(token)
        patch_error, size = None, 0
        if end.error is None:
            try:
                size = snapshot(workspace, base, patch)
            except BadPatch as exc:
                patch_error = str(exc)
    status = status_of(end, meter, patch_error, size > 0)
    error = end.error or patch_error
    if status == HARNESS_ERROR:
        error = error or (f"the provider failed ({meter.provider_failures} failed call(s), "
                          "the last one too) and the agent gave up")
        doc = task.unscored([error], entrant=entrant, attempt=attempt)
    elif patch_error is not None:
        doc = task.unscored([f"bad patch: {patch_error}"], entrant=entrant, attempt=attempt)
    else:
        if not patch.exists():
            patch.write_bytes(b"")
        doc = await task.score(patch, entrant=entrant, attempt=attempt)
    usage = meter.usage()
    doc["agent"] = {
        "status": status, "points": task.points(doc), "exit_code": end.exit_code,
        "seconds": end.seconds, "turns": usage["requests"], **usage,
        "walled": end.walled, "patch": patch.name if patch.exists() else None,
        "patch_bytes": size, "error": error,
        "output_tail": end.output,
    }
    log.info("agent_attempt", task=task.name, entrant=entrant, attempt=attempt, status=status,
             points=doc["agent"]["points"], requests=usage["requests"])
    return doc
