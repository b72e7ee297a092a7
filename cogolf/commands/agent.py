"""`cogolf agent ...`: coding agents play the offline games (run, check a task, show)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path
from typing import Any

from cogolf.logs import configure

HELP = "coding agents play Commit-0 and project tasks, walled, through a model gateway"


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser(
        "agent", help=HELP,
        description="An agent (a command-line agent, or the built-in one on an LLM config) "
        "plays a task from a fresh workspace, walled, reaching only the model gateway; the "
        "diff it leaves is scored by the game's own path on a clean copy.")
    sub = parser.add_subparsers(dest="agent_command", metavar="ACTION", required=True)
    run = sub.add_parser("run", help="play attempts of a task; one result file per attempt")
    run.add_argument("task_dir", type=Path, metavar="TASK",
                     help="a project task or a prepared Commit-0 task")
    run.add_argument("--agent", type=Path, required=True, metavar="AGENT.toml",
                     help="the agent file (command, llm, limits)")
    run.add_argument("--attempts", type=int, default=5, choices=range(1, 6), metavar="1..5",
                     help="independent attempts (default 5)")
    run.add_argument("--parallel", type=int, default=1, metavar="N",
                     help="attempts at once (default 1)")
    run.add_argument("--out", type=Path, required=True, metavar="DIR",
                     help="result files, patches and transcripts/ go here; a rerun keeps "
                     "finished attempts")
    run.add_argument("--entrant", default=None, help="the name in the results (default: the "
                     "agent's name)")
    _feedback(run)
    run.set_defaults(func=_run)
    check = sub.add_parser("check", help="the oracle must score full marks and the no-op the "
                           "template's baseline, through the whole pipeline")
    check.add_argument("task_dir", type=Path, metavar="TASK",
                       help="a project task or a prepared Commit-0 task")
    check.add_argument("--out", type=Path, default=None, metavar="DIR",
                       help="keep the results here (default: a temporary folder)")
    check.add_argument("--time-limit", type=float, default=900.0, metavar="SECONDS",
                       help="per attempt (default 900)")
    _feedback(check)
    check.set_defaults(func=_check)
    show = sub.add_parser("show", help="print an attempt's transcript as a conversation")
    show.add_argument("result", type=Path, metavar="RESULT",
                      help="a result file of `agent run` (or its transcript)")
    show.set_defaults(func=_show)


def _feedback(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--feedback", choices=("none", "lint", "tests"), default="lint",
                        help="Commit-0: what the agent may check its work with (default lint; "
                        "tests puts the suite in the workspace)")


def _task(args: argparse.Namespace) -> Any:
    from cogolf.games.registry import AgentTaskError, agent_task

    try:
        return agent_task(args.task_dir, feedback=args.feedback)
    except AgentTaskError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return None


def line(task: Any, n: int, doc: dict[str, Any] | None, cause: str) -> str:
    if doc is None:
        return f"{task.name} attempt {n}: void ({cause})"
    a = doc["agent"]
    cost = "-" if a["cost"] is None else f"{a['cost']:.4f}"
    kept = " (kept)" if cause == "kept" else ""
    return (f"{task.name} attempt {n}: {a['status']}, {a['points']:.3f} point(s), "
            f"{a['input_tokens'] + a['output_tokens']} tokens, cost {cost}, "
            f"{a['seconds']:.1f} s{kept}")


def table(results: list[dict[str, Any] | None]) -> list[str]:
    from cogolf.grid import grid

    rows = []
    for n, doc in enumerate(results, 1):
        if doc is None:
            rows.append([str(n), "void", "-", "-", "-", "-", "-"])
            continue
        a = doc["agent"]
        rows.append([str(n), a["status"], f"{a['points']:.3f}", str(a["turns"]),
                     str(a["input_tokens"] + a["output_tokens"]),
                     "-" if a["cost"] is None else f"{a['cost']:.4f}", f"{a['seconds']:.1f}"])
    total = sum(d["agent"]["points"] for d in results if d is not None)
    costs = [d["agent"]["cost"] for d in results if d is not None and d["agent"]["cost"]]
    lines = grid(["#", "status", "points", "turns", "tokens", "cost", "seconds"], rows)
    return [*lines, f"total {total:.3f} of {len(results)}" +
            (f", cost {sum(costs):.4f}" if costs else "")]


def _run(args: argparse.Namespace) -> int:
    from cogolf.agents.runs import run_attempts
    from cogolf.agents.spec import AgentSpecError, load_agent

    configure(args.log_level)
    task = _task(args)
    if task is None:
        return 2
    try:
        spec = load_agent(args.agent)
    except AgentSpecError as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    entrant = args.entrant or spec.name

    def report(n: int, doc: dict[str, Any] | None, cause: str) -> None:
        print(line(task, n, doc, cause), flush=True)

    results = asyncio.run(run_attempts(task, spec, args.out, attempts=args.attempts,
                                       parallel=args.parallel, entrant=entrant, report=report))
    print("\n".join(table(results)))
    return 0 if all(r is not None for r in results) else 1


def _check(args: argparse.Namespace) -> int:
    import tempfile

    from cogolf.agents.gateway import Gateway
    from cogolf.agents.oracle import NOOP, ORACLE, checked_agent, judge, responder
    from cogolf.agents.runs import play
    from cogolf.llm.fake import FakeProvider

    configure(args.log_level)
    task = _task(args)
    if task is None:
        return 2

    async def both(out: Path) -> list[Any]:
        verdicts = []
        with FakeProvider(responder(task)) as fake, Gateway() as gateway:
            for name in (ORACLE, NOOP):
                spec = checked_agent(name, fake, args.time_limit)
                doc, cause = await play(task, spec, gateway, out / name, entrant=name, attempt=1)
                verdicts.append(judge(name, doc, cause))
        return verdicts

    with tempfile.TemporaryDirectory(prefix="cogolf-agent-check-") as tmp:
        verdicts = asyncio.run(both(args.out or Path(tmp)))
    for v in verdicts:
        points = "-" if v.points is None else f"{v.points:.3f}"
        print(f"{task.name} {v.agent}: {'pass' if v.passed else 'FAIL'} ({v.status}, "
              f"{points} point(s)){': ' + v.why if v.why else ''}")
    return 0 if all(v.passed for v in verdicts) else 1


def _show(args: argparse.Namespace) -> int:
    from cogolf.agents.attempt import TRANSCRIPTS_DIR
    from cogolf.agents.show import render

    path = args.result
    if path.suffix == ".json":
        path = path.parent / TRANSCRIPTS_DIR / (path.name.removesuffix(".json") + ".ndjson")
    try:
        text = render(path)
    except OSError as exc:
        print(f"error: {path}: cannot read ({exc.strerror})", file=sys.stderr)
        return 2
    print(text)
    return 0
