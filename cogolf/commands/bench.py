"""`cogolf bench ...`: benchmarks that print numbers (never timed tests).

Each benchmark is one entry in BENCHMARKS: a name, a help line, a function adding
its options and a handler. Adding a benchmark is one new entry.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any

from cogolf.commands import golf as golf_command
from cogolf.commands.common import add_json_option, add_sandbox_options, sandbox_modes
from cogolf.logs import configure
from cogolf.sandbox import make_sandbox
from cogolf.sandbox.api import CallStatus, LoadStatus, Sandbox

if TYPE_CHECKING:
    from cogolf.deck import Deck

BENCH_SOURCE = "def solve(a, b):\n    return [a + b, a * b]\n"


@dataclass(frozen=True)
class Benchmark:
    name: str
    help: str
    add_arguments: Callable[[argparse.ArgumentParser], None]
    run: Callable[[argparse.Namespace], int]


def _mode_arguments(p: argparse.ArgumentParser) -> None:
    """The options of the benchmarks that compare sandbox modes."""
    add_sandbox_options(p, several=True)
    p.add_argument("--modes", default=None, metavar="MODE,...",
                   help="deprecated spelling of --sandbox MODE (repeated)")
    add_json_option(p)


# --- bench sandbox ------------------------------------------------------------------


def _sandbox_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--batches", type=int, default=200,
                   help="batches timed per mode for the latency figures (default 200)")
    p.add_argument("--calls", type=int, default=20, help="calls per batch (default 20)")
    p.add_argument("--seconds", type=float, default=3.0,
                   help="seconds per throughput measurement (default 3)")
    _mode_arguments(p)


def _percentile(sorted_values: list[float], q: float) -> float:
    if not sorted_values:
        return float("nan")
    idx = min(len(sorted_values) - 1, max(0, round(q * (len(sorted_values) - 1))))
    return sorted_values[idx]


async def _one_batch(sb: Sandbox, calls: list[list[Any]]) -> float:
    start = time.perf_counter()
    result = await sb.run_batch(BENCH_SOURCE, calls)
    elapsed = time.perf_counter() - start
    if result.load is not LoadStatus.OK or any(c.status is not CallStatus.OK
                                               for c in result.results):
        raise RuntimeError(f"benchmark batch failed: {result.load_detail or result.results[0]}")
    return elapsed


async def _throughput(sb: Sandbox, calls: list[list[Any]], concurrency: int,
                      seconds: float) -> float:
    stop_at = time.perf_counter() + seconds
    done = 0

    async def worker() -> None:
        nonlocal done
        while time.perf_counter() < stop_at:
            await _one_batch(sb, calls)
            done += 1

    start = time.perf_counter()
    await asyncio.gather(*(worker() for _ in range(concurrency)))
    return done / (time.perf_counter() - start)


_FLOOR_SCRIPT = """
import os, resource, sys, time
def kids():
    u = resource.getrusage(resource.RUSAGE_CHILDREN)
    return u.ru_utime + u.ru_stime
n = int(sys.argv[1])
w0, c0, k0 = time.perf_counter(), time.process_time(), kids()
for _ in range(n):
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        os.write(w, b"x")
        os._exit(0)
    os.read(r, 1)
    os.waitpid(pid, 0)
    os.close(r)
    os.close(w)
print((time.perf_counter() - w0) / n, (time.process_time() - c0 + kids() - k0) / n)
"""


def _fork_floor(rounds: int) -> dict[str, float]:
    """The floor under any batch: a bare `fork`, a byte down a pipe and `_exit`, from a
    small interpreter as the fork server is, timed in wall clock and in CPU of parent
    and child together."""
    from cogolf.sandbox.interpreter import real_python

    out = subprocess.run([real_python(), "-I", "-S", "-c", _FLOOR_SCRIPT, str(rounds)],
                         capture_output=True, text=True, check=True, timeout=60).stdout
    wall, cpu = (float(x) for x in out.split())
    return {"wall_ms": wall * 1e3, "cpu_ms": cpu * 1e3}


def _children_cpu() -> float:
    usage = resource.getrusage(resource.RUSAGE_CHILDREN)
    return usage.ru_utime + usage.ru_stime


def _sandbox_cpu(sb: Sandbox) -> float:
    """CPU of everything the sandbox ran: our reaped children, and its helpers (a fork
    server reaps its own children, so their CPU is counted in its /proc entry)."""
    helpers = getattr(sb, "helper_cpu_seconds", None)
    return _children_cpu() + (helpers() if helpers is not None else 0.0)


async def _settled(sb: Sandbox) -> None:
    drain = getattr(sb, "drain", None)
    if drain is not None:
        await drain()


async def _hole(sb: Sandbox) -> float:
    """One hole's sandbox work: reference batch, two defender batches, two par batches."""
    ref_calls = [[i, i + 1] for i in range(10)]
    shots = [[i, 2] for i in range(5)]
    par = [[i, 3] for i in range(4)]
    start = time.perf_counter()
    await sb.run_batch(BENCH_SOURCE, ref_calls, trusted=True)  # as the engine runs it
    await asyncio.gather(
        sb.run_batch(BENCH_SOURCE, shots), sb.run_batch(BENCH_SOURCE, shots),
        sb.run_batch(BENCH_SOURCE, par), sb.run_batch(BENCH_SOURCE, par),
    )
    return time.perf_counter() - start


async def _bench_mode(mode: str, args: argparse.Namespace) -> dict[str, Any]:
    sb = make_sandbox(mode, accept_weak=args.accept_weak_sandbox)
    await sb.start()
    calls = [[i, i + 1] for i in range(args.calls)]
    try:
        for _ in range(5):
            await _one_batch(sb, calls)
        n = args.batches if mode == "fork" else max(10, args.batches // 10)
        await _settled(sb)
        floor = _fork_floor(max(20, n // 2))
        parent, child = time.process_time(), _sandbox_cpu(sb)
        lat = sorted([await _one_batch(sb, calls) for _ in range(n)])
        await _settled(sb)  # every child reaped, so its CPU is counted
        parent, child = time.process_time() - parent, _sandbox_cpu(sb) - child
        floor_after = _fork_floor(max(20, n // 2))  # the floor before and after: load drifts
        tput = {c: await _throughput(sb, calls, c, args.seconds) for c in (1, 2, 4)}
        holes = sorted([await _hole(sb) for _ in range(max(5, n // 4))])
        return {
            "mode": mode,
            "batches_timed": n,
            "calls_per_batch": args.calls,
            "median_ms": statistics.median(lat) * 1e3,
            "p90_ms": _percentile(lat, 0.9) * 1e3,
            "batches_per_second": {str(c): v for c, v in tput.items()},
            "hole_median_ms": statistics.median(holes) * 1e3,
            "cpu_ms_per_batch": {"parent": parent / n * 1e3, "sandbox": child / n * 1e3},
            "fork_floor": {k: (floor[k] + floor_after[k]) / 2 for k in floor},
            "walls": sb.describe()["walls"],
        }
    finally:
        await sb.close()


def _run_sandbox(args: argparse.Namespace) -> int:
    configure("warning")
    modes = sandbox_modes(args)
    if args.batches < 1 or args.calls < 0 or args.seconds <= 0:
        print("--batches must be >= 1, --calls >= 0 and --seconds > 0", file=sys.stderr)
        return 2
    try:
        results = {m: asyncio.run(_bench_mode(m, args)) for m in modes}
    except Exception as exc:
        print(f"bench sandbox: {exc}", file=sys.stderr)
        return 1
    report: dict[str, Any] = {"benchmark": "sandbox", "modes": results}
    if "fork" in results and "spawn" in results:
        f, s = results["fork"]["batches_per_second"], results["spawn"]["batches_per_second"]
        report["fork_spawn_ratio"] = {c: f[c] / s[c] for c in f if s.get(c)}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"sandbox batch = load + {args.calls} calls of a small function")
    for mode, r in results.items():
        bps = r["batches_per_second"]
        print(f"  {mode:5s}  median {r['median_ms']:7.2f} ms   p90 {r['p90_ms']:7.2f} ms   "
              f"batches/s  c1 {bps['1']:7.1f}  c2 {bps['2']:7.1f}  c4 {bps['4']:7.1f}   "
              f"hole {r['hole_median_ms']:6.1f} ms")
        cpu, fl = r["cpu_ms_per_batch"], r["fork_floor"]
        total = cpu["parent"] + cpu["sandbox"]
        print(f"         CPU per batch {total:6.2f} ms (parent {cpu['parent']:.2f}, sandbox "
              f"{cpu['sandbox']:.2f}) = {total / fl['cpu_ms']:.1f}x the floor; bare fork round "
              f"trip, same run: {fl['cpu_ms']:.2f} ms CPU, {fl['wall_ms']:.2f} ms wall")
    if "fork_spawn_ratio" in report:
        ratio = report["fork_spawn_ratio"]
        print("  fork/spawn throughput ratio  "
              + "  ".join(f"c{c} {v:.1f}x" for c, v in ratio.items()))
    return 0


# --- bench hole ---------------------------------------------------------------------


def _hole_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=10,
                   help="times every spec of the core deck is resolved per mode (default 10)")
    _mode_arguments(p)


def _baseline_holes() -> list[tuple[str, Any, Any, list[Any]]]:
    """(key, spec, hidden, [literalist, pedant]) for every spec of the core deck."""
    from cogolf.bots.scripted import BASELINE_NAMES
    from cogolf.deck import load
    from cogolf.deck_check import _accepted

    deck = load()
    holes = []
    for key in deck.spec_keys():
        plays = [_accepted(deck, key, name) for name in BASELINE_NAMES]
        bad = [p for p in plays if isinstance(p, str)]
        if bad:
            raise RuntimeError(f"spec {key}: baseline play not acceptable: {bad[0]}")
        holes.append((key, deck.spec(key), deck.hidden[key], plays))
    return holes


async def _bench_holes(mode: str, holes: list[tuple[str, Any, Any, list[Any]]],
                       rounds: int, accept_weak: bool) -> dict[str, Any]:
    from cogolf.runtime.resolve import resolve_hole
    from cogolf.sandbox.api import Limits

    sb = make_sandbox(mode, accept_weak=accept_weak)
    await sb.start()
    limits = Limits()
    try:
        for _key, spec, hidden, plays in holes:  # warm-up: uids, cgroups, caches
            await resolve_hole(sb, spec, hidden, plays, limits)
        times: list[float] = []
        per_spec: dict[str, list[float]] = {key: [] for key, *_ in holes}
        await _settled(sb)
        parent, child = time.process_time(), _sandbox_cpu(sb)
        start = time.perf_counter()
        for _ in range(rounds):
            for key, spec, hidden, plays in holes:
                t0 = time.perf_counter()
                await resolve_hole(sb, spec, hidden, plays, limits)
                elapsed = time.perf_counter() - t0
                times.append(elapsed)
                per_spec[key].append(elapsed)
        total = time.perf_counter() - start
        await _settled(sb)
        parent, child = time.process_time() - parent, _sandbox_cpu(sb) - child
        times.sort()
        workers = getattr(sb, "workers", None)
        return {
            "cpu_ms_per_hole": {"parent": parent / len(times) * 1e3,
                                "sandbox": child / len(times) * 1e3},
            "reference_workers": {"started": workers.started, "reused": workers.reused}
            if workers is not None else None,
            "mode": mode,
            "holes_timed": len(times),
            "median_ms": statistics.median(times) * 1e3,
            "p90_ms": _percentile(times, 0.9) * 1e3,
            "max_ms": times[-1] * 1e3,
            "holes_per_second": len(times) / total,
            "per_spec_median_ms": {k: statistics.median(v) * 1e3 for k, v in per_spec.items()},
        }
    finally:
        await sb.close()


def _run_hole(args: argparse.Namespace) -> int:
    configure("warning")
    modes = sandbox_modes(args)
    if args.rounds < 1:
        print("--rounds must be >= 1", file=sys.stderr)
        return 2
    try:
        holes = _baseline_holes()
        results = {m: asyncio.run(_bench_holes(m, holes, args.rounds, args.accept_weak_sandbox))
                   for m in modes}
    except Exception as exc:
        print(f"bench hole: {exc}", file=sys.stderr)
        return 1
    report: dict[str, Any] = {"benchmark": "hole", "specs": len(holes), "rounds": args.rounds,
                              "modes": results}
    if args.json:
        print(json.dumps(report, indent=2))
        return 0
    print(f"hole = reference batch + 2 defender batches + 2 par batches, literalist vs pedant, "
          f"{len(holes)} specs x {args.rounds} rounds")
    for mode, r in results.items():
        print(f"  {mode:5s}  median {r['median_ms']:7.2f} ms   p90 {r['p90_ms']:7.2f} ms   "
              f"max {r['max_ms']:7.2f} ms   holes/s {r['holes_per_second']:7.1f}")
        cpu = r["cpu_ms_per_hole"]
        print(f"         CPU per hole {cpu['parent'] + cpu['sandbox']:6.2f} ms (parent "
              f"{cpu['parent']:.2f}, sandbox {cpu['sandbox']:.2f})"
              + (f"; reference workers {r['reference_workers']['started']} started, "
                 f"{r['reference_workers']['reused']} batches reused one"
                 if r["reference_workers"] else ""))
    return 0


def _core_deck(holes: int) -> tuple[Deck, int]:
    """The core pack, and `holes` brought within 1..its number of specs."""
    from cogolf.deck import load

    deck = load()
    return deck, max(1, min(holes, len(deck.spec_keys())))


# --- bench server -------------------------------------------------------------------


def _server_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--matches", type=int, default=8, help="concurrent matches (default 8)")
    p.add_argument("--holes", type=int, default=9, help="holes per match (default 9)")
    add_sandbox_options(p)
    add_json_option(p)


def _run_server(args: argparse.Namespace) -> int:
    from cogolf.games.registry import LIVE
    from cogolf.server.bench import bench_server, format_report

    configure("warning")
    if not 1 <= args.matches <= 512:
        print("cogolf: --matches must be between 1 and 512", file=sys.stderr)
        return 2
    deck, holes = _core_deck(args.holes)
    doc = asyncio.run(
        bench_server(
            deck, games=LIVE, matches=args.matches, holes=holes, sandbox_mode=args.sandbox,
            accept_weak=args.accept_weak_sandbox,
        )
    )
    print(json.dumps(doc, indent=2) if args.json else format_report(doc))
    return 0 if not doc["incomplete"] else 1


# --- bench pages --------------------------------------------------------------------


def _pages_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--entrants", type=int, default=32, help="entrants of the night (default 32)")
    p.add_argument("--loads", type=int, default=5, help="page loads timed per page (default 5)")
    p.add_argument("--spectators", type=int, default=20,
                   help="spectators on the night page during bench server (default 20; 0: skip)")
    p.add_argument("--matches", type=int, default=8, help="bench server's matches (default 8)")
    p.add_argument("--rounds", type=int, default=2,
                   help="bench server runs without and with spectators, alternating (default 2)")
    p.add_argument("--holes", type=int, default=9, help="holes per match (default 9)")
    add_sandbox_options(p)
    add_json_option(p)


def _run_pages(args: argparse.Namespace) -> int:
    import tempfile

    from cogolf.games.registry import LIVE
    from cogolf.league.publish import standings_for_dir, write_standings
    from cogolf.pages import nights_bench as nb
    from cogolf.server.bench import bench_server

    def standings(folder: Path, out: Path) -> None:
        write_standings(standings_for_dir(folder, "literalist"), out)

    configure("warning")
    if not 2 <= args.entrants <= 64 or not 1 <= args.loads <= 100 or args.spectators < 0:
        print("cogolf: --entrants must be 2..64, --loads 1..100, --spectators >= 0",
              file=sys.stderr)
        return 2
    with tempfile.TemporaryDirectory(prefix="cogolf-bench-pages-") as tmp:
        root = Path(tmp)
        try:
            pages = nb.run_pages_bench(root, args.entrants, args.loads, standings)
        except ImportError:
            print("cogolf: bench pages needs playwright (pip install playwright)", file=sys.stderr)
            return 3
        doc: dict[str, Any] = {"pages": pages}
        if not args.json:
            print(nb.format_pages(doc["pages"]), flush=True)
        if args.spectators:
            deck, holes = _core_deck(args.holes)
            from cogolf.pages.nights import NightFolders
            from cogolf.pages.routes import Site

            site = Site(nights=NightFolders(root / "league", root / "replays"))

            def server(during: Any) -> dict[str, Any]:
                return asyncio.run(bench_server(
                    deck, games=LIVE, matches=args.matches, holes=holes,
                    sandbox_mode=args.sandbox, accept_weak=args.accept_weak_sandbox,
                    pages=site, during=during,
                ))  # fmt: skip

            crowd = nb.Spectators(args.spectators)
            plains, crowded = [], []
            for _ in range(max(1, args.rounds)):  # alternating, so load drifts hit both sides
                plains.append(server(None))
                crowded.append(server(crowd.run()))
            plain, watched = nb.median_doc(plains), nb.median_doc(crowded)
            doc["server"] = {"without": plain, "with": watched,
                             "spectators": nb.spectator_figures(crowd)}
            if not args.json:
                print(nb.format_server_pair(plain, watched, doc["server"]["spectators"]))
    if args.json:
        print(json.dumps(doc, indent=2))
    return 0


# --- bench flood --------------------------------------------------------------------


def _flood_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--rounds", type=int, default=4,
                   help="clean and flooded matches each, alternating (default 4)")
    p.add_argument("--holes", type=int, default=9, help="holes per match (default 9)")
    add_sandbox_options(p)
    add_json_option(p)


def _run_flood(args: argparse.Namespace) -> int:
    from cogolf.server.flood import bench_flood, format_report, passed

    configure("warning")
    if not 1 <= args.rounds <= 50:
        print("cogolf: --rounds must be between 1 and 50", file=sys.stderr)
        return 2
    deck, holes = _core_deck(args.holes)
    doc = asyncio.run(
        bench_flood(deck, rounds=args.rounds, holes=holes, sandbox_mode=args.sandbox,
                    accept_weak=args.accept_weak_sandbox)
    )
    print(json.dumps(doc, indent=2) if args.json else format_report(doc))
    return 0 if passed(doc) else 1


# --- bench golf ---------------------------------------------------------------------


def _run_golf(args: argparse.Namespace) -> int:
    configure("warning")  # the Python course's sandbox logs its start at info level
    return golf_command.run_bench(args)


# --- bench league -------------------------------------------------------------------


def _league_arguments(p: argparse.ArgumentParser) -> None:
    from cogolf.commands.league import bench_arguments

    bench_arguments(p)


def _run_league(args: argparse.Namespace) -> int:
    from cogolf.commands.league import bench_command

    return bench_command(args)


# --- bench project -----------------------------------------------------------------


def _project_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("tasks", nargs="*", type=Path, metavar="TASK_DIR",
                   help="task folders (default: every task with a solution/ under "
                   "references/projects)")
    p.add_argument("--task", action="append", default=[], metavar="NAME",
                   help="a shipped task by name (references/projects/NAME); repeatable")
    p.add_argument("--repeat", type=int, default=1,
                   help="attempts per task with twins, and as many without (default 1)")
    add_json_option(p, "the rows as JSON")


def _run_project(args: argparse.Namespace) -> int:
    from cogolf.evaluation.twin_bench import cost_lines
    from cogolf.games.project.bench import bench_task, find_tasks
    from cogolf.games.project.task import TaskError

    configure("warning")
    shipped = Path("references/projects")
    bad = [n for n in args.task if "/" in n or not (shipped / n / "task.json").is_file()]
    if bad:
        print(f"error: --task {bad[0]!r} is not a shipped task (one of "
              f"{', '.join(p.name for p in find_tasks(shipped))})", file=sys.stderr)
        return 2
    tasks = [*args.tasks, *(shipped / n for n in args.task)] or find_tasks(shipped)
    if not tasks or args.repeat < 1:
        print("error: no task to run (give TASK_DIR...) or --repeat below 1", file=sys.stderr)
        return 2
    rows = []
    for task_dir in tasks:
        try:
            rows.append(asyncio.run(bench_task(task_dir, args.repeat)))
        except TaskError as exc:
            print(f"error: {exc}", file=sys.stderr)
            return 2
        if not args.json:
            r = rows[-1]
            warm_up = r["warm_up_seconds"]
            warm = f"  (build cache warm-up {warm_up}s)" if warm_up else ""
            print(f"{r['task']:<24} {r['status']:<8} {r['points']:.2f} pt  checks {r['checks']:<7}"
                  f" twins {r['twins'] if r['twins'] is not None else '-'}"
                  f" (limit {r['time_limit_seconds']:g}s){warm}", flush=True)
            for line in cost_lines(r):
                print(f"  {line}", flush=True)
    if args.json:
        print(json.dumps(rows, indent=2))
    return 0


# --- bench commit0 -----------------------------------------------------------------


def _commit0_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("task_dir", nargs="?", type=Path, metavar="TASK_DIR",
                   help="a prepared task (default: textkit, prepared into a temporary folder)")
    p.add_argument("--submission", type=Path, metavar="DIR",
                   help="what to score (default: textkit's original, or the task's skeleton)")
    p.add_argument("--repeat", type=int, default=3,
                   help="scores with twins, and as many without (default 3)")
    add_json_option(p)


def _run_commit0(args: argparse.Namespace) -> int:
    from cogolf.evaluation.twin_bench import cost_lines
    from cogolf.games.commit0.bench import bench_commit0
    from cogolf.games.commit0.layout import SourceError
    from cogolf.games.commit0.task import TaskError

    configure("warning")
    if args.repeat < 1:
        print("error: --repeat must be >= 1", file=sys.stderr)
        return 2
    try:
        row = asyncio.run(bench_commit0(args.task_dir, args.submission, args.repeat))
    except (TaskError, SourceError) as exc:
        print(f"error: {exc}", file=sys.stderr)
        return 2
    if args.json:
        print(json.dumps(row, indent=2))
    else:
        print(f"{row['task']}: {row['status']} pass rate {row['pass_rate']:.3f} of "
              f"{row['reference_ids']} ids, twins {row['twins']} per run "
              f"({row['eligible_tests']} tests eligible)")
        for line in cost_lines(row):
            print(f"  per score, {line}")
    return 0


# --- bench llm ---------------------------------------------------------------------


def _llm_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--latency", type=float, default=0.5,
                   help="the fake provider's fixed latency in seconds (default 0.5)")
    p.add_argument("--holes", type=int, default=30,
                   help="holes timed per provider for the overhead (default 30)")
    p.add_argument("--seats", type=int, default=16, help="LLM seats at once (default 16)")
    p.add_argument("--seat-holes", type=int, default=3,
                   help="holes of each concurrent match (default 3)")
    p.add_argument("--deadline", type=float, default=5.0,
                   help="hole deadline of the concurrent matches in seconds (default 5)")
    add_json_option(p)


def _run_llm(args: argparse.Namespace) -> int:
    from cogolf.games.registry import LIVE
    from cogolf.server.llm_bench import bench_llm, format_bench

    configure("warning")
    if args.seats < 2 or args.seats % 2 or args.holes < 1 or args.seat_holes < 1:
        print("error: --seats must be an even number >= 2, --holes and --seat-holes >= 1",
              file=sys.stderr)
        return 2
    numbers = asyncio.run(bench_llm(LIVE, latency=args.latency, holes=args.holes,
                                    seats=args.seats, seat_holes=args.seat_holes,
                                    deadline=args.deadline))
    print(json.dumps(numbers, sort_keys=True) if args.json else format_bench(numbers))
    return 0


# --- bench agent -------------------------------------------------------------------


def _agent_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--calls", type=int, default=200,
                   help="model calls timed straight and through the gateway (default 200)")
    p.add_argument("--latency", type=float, default=0.05,
                   help="the fake provider's fixed latency in seconds (default 0.05)")
    p.add_argument("--task", type=Path, default=Path("references/projects/csv_importer"),
                   metavar="TASK_DIR", help="the task the oracle's attempts play (default "
                   "references/projects/csv_importer)")
    p.add_argument("--attempts", type=int, default=4,
                   help="attempts at each --parallel (default 4; 0 skips them)")
    p.add_argument("--parallel", default="1,2,4", metavar="N,N,...",
                   help="attempts at once, each in the same run (default 1,2,4)")
    add_json_option(p)


def _run_agent(args: argparse.Namespace) -> int:
    import tempfile

    from cogolf.agents.bench import attempts_per_minute, format_bench, overhead
    from cogolf.games.registry import AgentTaskError, agent_task

    configure("warning")
    try:
        parallels = [int(n) for n in args.parallel.split(",")]
        task = agent_task(args.task) if args.attempts else None
    except ValueError as exc:
        print(f"error: {exc if isinstance(exc, AgentTaskError) else '--parallel: N,N,...'}",
              file=sys.stderr)
        return 2
    if args.calls < 1 or args.attempts < 0 or min(parallels) < 1:
        print("error: --calls and --parallel must be >= 1, --attempts >= 0", file=sys.stderr)
        return 2
    doc: dict[str, Any] = {"overhead": overhead(args.calls, args.latency), "attempts": []}
    if task is not None:
        doc["task"] = task.name
        with tempfile.TemporaryDirectory(prefix="cogolf-bench-agent-") as tmp:
            doc["attempts"] = attempts_per_minute(task, parallels, args.attempts,
                                                  args.latency, Path(tmp))
    print(json.dumps(doc, sort_keys=True) if args.json else format_bench(doc))
    return 0


# --- bench startup -----------------------------------------------------------------


def _startup_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--runs", type=int, default=10,
                   help="runs of each start-up figure (default 10)")
    p.add_argument("--play-runs", type=int, default=3,
                   help="runs of each `play --in-process` figure (default 3)")
    p.add_argument("--cogolf", default=None, metavar="COMMAND",
                   help="the cogolf command to measure, split as a shell splits words, e.g. "
                   "another installation's bin/cogolf (default: this one, as python -m cogolf)")
    add_json_option(p)


def _run_startup(args: argparse.Namespace) -> int:
    import shlex

    from cogolf.startup_bench import bench_startup, format_startup

    configure("warning")
    if args.runs < 1 or args.play_runs < 1:
        print("cogolf: --runs and --play-runs must be >= 1", file=sys.stderr)
        return 2
    cogolf = shlex.split(args.cogolf) if args.cogolf else [sys.executable, "-P", "-m", "cogolf"]
    try:
        doc = bench_startup(cogolf, args.runs, args.play_runs)
    except (OSError, RuntimeError, subprocess.CalledProcessError) as exc:
        print(f"bench startup: {exc}", file=sys.stderr)
        return 1
    print(json.dumps(doc, indent=2) if args.json else format_startup(doc))
    return 0


# --- bench ladder -------------------------------------------------------------------


def _ladder_arguments(p: argparse.ArgumentParser) -> None:
    p.add_argument("--entrants", default="8,16,32", metavar="N,N,...",
                   help="field sizes of the pairing simulation (default 8,16,32)")
    p.add_argument("--trials", type=int, default=5,
                   help="simulated fields per size (default 5)")
    p.add_argument("--matches", type=int, default=16,
                   help="ladder results timed in the server part (default 16; 0: skip it)")
    p.add_argument("--bots", type=int, default=16,
                   help="instant ladder bots, one match at once each (default 16); bench "
                   "server runs half as many matches at once beside it")
    p.add_argument("--holes", type=int, default=9, help="holes per match (default 9)")
    p.add_argument("--rounds", type=int, default=2,
                   help="ladder and bench server runs, alternating (default 2)")
    add_sandbox_options(p)
    add_json_option(p)


def _run_ladder(args: argparse.Namespace) -> int:
    from cogolf.games.registry import LIVE
    from cogolf.ladder.bench import (
        bench_ladder_server,
        bench_pairing,
        format_ladder,
        hole_table,
    )
    from cogolf.server.bench import bench_server

    configure("error")
    try:
        sizes = [int(x) for x in args.entrants.split(",")]
    except ValueError:
        print("cogolf: --entrants: N,N,...", file=sys.stderr)
        return 2
    if min(sizes) < 3 or max(sizes) > 64 or args.trials < 1 or args.matches < 0 \
            or args.bots < 2 or args.rounds < 1:
        print("cogolf: --entrants 3..64, --trials >= 1, --matches >= 0, --bots >= 2, "
              "--rounds >= 1", file=sys.stderr)
        return 2
    deck, holes = _core_deck(args.holes)
    table = asyncio.run(hole_table(args.sandbox, args.accept_weak_sandbox))
    doc: dict[str, Any] = {"pairing": bench_pairing(table, sizes, args.trials), "server": []}
    for _ in range(args.rounds if args.matches else 0):
        ladder = asyncio.run(bench_ladder_server(
            deck, games=LIVE, bots=args.bots, concurrent=1, matches=args.matches, holes=holes,
            sandbox_mode=args.sandbox, accept_weak=args.accept_weak_sandbox))
        plain = asyncio.run(bench_server(
            deck, games=LIVE, matches=max(1, args.bots // 2), holes=holes,
            sandbox_mode=args.sandbox, accept_weak=args.accept_weak_sandbox))
        doc["server"].append({"ladder": ladder, "bench_server": plain})
    print(json.dumps(doc, indent=2) if args.json else format_ladder(doc))
    return 0


BENCHMARKS: list[Benchmark] = [
    Benchmark("sandbox", "batch latency and throughput of both sandbox modes",
              _sandbox_arguments, _run_sandbox),
    Benchmark("hole", "full holes of the core deck resolved through the real engine",
              _hole_arguments, _run_hole),
    Benchmark("server", "concurrent matches with instant bots over real websockets",
              _server_arguments, _run_server),
    Benchmark("pages", "night and match pages rendered in Chromium; bench server with spectators",
              _pages_arguments, _run_pages),
    Benchmark("flood", "an honest bot's latency and the server's memory against a flooding seat",
              _flood_arguments, _run_flood),
    Benchmark("league", "an N-entrant night of instant scripted bots",
              _league_arguments, _run_league),
    Benchmark("ladder", "matches the adaptive pairing needs against the round-robin's; a "
              "ladder server's matches/s beside bench server", _ladder_arguments, _run_ladder),
    Benchmark("golf", "seconds to score a full 18-hole course per language (reference files)",
              golf_command.add_bench_arguments, _run_golf),
    Benchmark("startup", "seconds a cogolf process takes to start: --help, a bot connected, "
              "a play's fixed cost", _startup_arguments, _run_startup),
    Benchmark("project", "seconds per project attempt with each task's reference solution, "
              "with and without twins", _project_arguments, _run_project),
    Benchmark("commit0", "seconds per Commit-0 score with and without twins",
              _commit0_arguments, _run_commit0),
    Benchmark("llm", "LLM seats against a fake provider: overhead per hole, many seats at once",
              _llm_arguments, _run_llm),
    Benchmark("agent", "the model gateway's overhead per call; agent attempts per minute at "
              "each parallel", _agent_arguments, _run_agent),
]


def register(subparsers: argparse._SubParsersAction) -> None:
    parser = subparsers.add_parser("bench", help="benchmarks that print numbers",
                                   description="Benchmarks that print numbers.")
    sub = parser.add_subparsers(dest="benchmark", metavar="BENCHMARK", required=True)
    for bench in BENCHMARKS:
        p = sub.add_parser(bench.name, help=bench.help, description=bench.help)
        bench.add_arguments(p)
        p.set_defaults(func=bench.run)
