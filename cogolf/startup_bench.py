"""What a `cogolf` process costs before it does its work (`cogolf bench startup`).

Every bot process of a league night and every command an operator types pays the
interpreter's start and the imports of its subcommand. This measures, from the
outside and as whole processes: a bare interpreter, `cogolf --help`, the time from
starting a `cogolf bot` process to its seat being connected on a live server, and
a 1-hole against a 9-hole `cogolf play --in-process` (their difference is the
match; what is left of the 1-hole run is fixed start-up).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import resource
import statistics
import subprocess
import sys
import tempfile
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

HELP_TARGET = 0.15  # seconds for `cogolf --help`
BOT_TARGET = 0.3  # seconds from starting `cogolf bot` to its seat being connected


def _timed(argv: Sequence[str]) -> float:
    return _run(argv)[0]


def _run(argv: Sequence[str]) -> tuple[float, float]:
    """Wall seconds and CPU seconds (the process and every descendant it reaped); on
    a loaded machine the CPU figure is the steadier one."""
    before = resource.getrusage(resource.RUSAGE_CHILDREN)
    start = time.perf_counter()
    subprocess.run(argv, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL, check=True)
    wall = time.perf_counter() - start
    after = resource.getrusage(resource.RUSAGE_CHILDREN)
    return wall, (after.ru_utime - before.ru_utime) + (after.ru_stime - before.ru_stime)


def _summary(values: list[float]) -> dict[str, float]:
    return {"median": statistics.median(values), "min": min(values), "max": max(values)}


async def _bot_connect_times(cogolf: Sequence[str], runs: int) -> list[float]:
    """Seconds from starting `cogolf bot` until the server counts its seat connected."""
    from cogolf.deck import load
    from cogolf.games.registry import LIVE
    from cogolf.server.requests import CreateMatch
    from cogolf.server.run import ServeOptions, start_server

    times = []
    with tempfile.TemporaryDirectory(prefix="cogolf-startup-") as tmp:
        deck = load()
        server = await start_server(
            ServeOptions(
                games=LIVE,
                data_dir=Path(tmp),
                decks={deck.name: deck},
                port=0,
                connect_timeout=600.0,
                resume=False,
                accept_weak_sandbox=True,  # no program of these matches ever runs
            )
        )
        try:
            for run in range(runs):
                hosted, tokens = server.registry.create(
                    CreateMatch(match_id=f"startup-{run}", holes=1)
                )
                url = f"{server.ws_url}/matches/{hosted.match_id}/player?slot=0&token={tokens[0]}"
                start = time.perf_counter()
                proc = await asyncio.create_subprocess_exec(
                    *cogolf,
                    "bot",
                    "--url",
                    url,
                    stdin=asyncio.subprocess.DEVNULL,
                    stdout=asyncio.subprocess.DEVNULL,
                    stderr=asyncio.subprocess.DEVNULL,
                    start_new_session=True,
                )
                try:
                    while not hosted.seats[0].ever_connected:
                        if proc.returncode is not None:
                            raise RuntimeError(f"the bot exited with {proc.returncode}")
                        await asyncio.sleep(0.001)
                    times.append(time.perf_counter() - start)
                finally:
                    with contextlib.suppress(ProcessLookupError):
                        os.killpg(proc.pid, 9)
                    await proc.wait()
                    assert hosted.task is not None
                    hosted.task.cancel()
                    with contextlib.suppress(BaseException):
                        await hosted.task
        finally:
            await server.stop()
    return times


def bench_startup(cogolf: Sequence[str], runs: int, play_runs: int) -> dict[str, Any]:
    """The figures of `cogolf bench startup` for the command `cogolf` (an argv prefix)."""
    python = [_timed([sys.executable, "-c", "pass"]) for _ in range(runs)]
    help_ = [_timed([*cogolf, "--help"]) for _ in range(runs)]
    bot = asyncio.run(_bot_connect_times(cogolf, runs))
    play: dict[str, Any] = {}
    play_cpu: dict[str, Any] = {}
    with tempfile.TemporaryDirectory(prefix="cogolf-startup-") as tmp:
        for holes in (1, 9):
            argv = [*cogolf, "play", "--in-process", "--holes", str(holes), "--replays", tmp]
            runs = [_run(argv) for _ in range(play_runs)]
            play[str(holes)] = _summary([wall for wall, _ in runs])
            play_cpu[str(holes)] = _summary([cpu for _, cpu in runs])
    one, nine = play["1"]["median"], play["9"]["median"]
    per_hole = (nine - one) / 8
    cpu_one, cpu_nine = play_cpu["1"]["median"], play_cpu["9"]["median"]
    cpu_fixed = cpu_one - (cpu_nine - cpu_one) / 8
    return {
        "benchmark": "startup",
        "command": list(cogolf),
        "python_pass_seconds": _summary(python),
        "help_seconds": _summary(help_),
        "bot_connected_seconds": _summary(bot),
        "play_in_process_seconds": play,
        "play_in_process_cpu_seconds": play_cpu,
        "play_fixed_seconds": one - per_hole,
        "play_fixed_share_of_9_holes": (one - per_hole) / nine if nine else 0.0,
        "play_fixed_cpu_seconds": cpu_fixed,
        "play_fixed_cpu_share_of_9_holes": cpu_fixed / cpu_nine if cpu_nine else 0.0,
        "targets": {"help_seconds": HELP_TARGET, "bot_connected_seconds": BOT_TARGET},
    }


def format_startup(doc: dict[str, Any]) -> str:
    def row(label: str, s: dict[str, float], target: float | None = None) -> str:
        goal = f"   (target < {target:g} s)" if target is not None else ""
        return (
            f"  {label:34s} median {s['median']:6.3f} s   min {s['min']:6.3f}   "
            f"max {s['max']:6.3f}{goal}"
        )

    play = doc["play_in_process_seconds"]
    return "\n".join(
        [
            f"start-up of {' '.join(doc['command'])}",
            row("python -c pass", doc["python_pass_seconds"]),
            row("cogolf --help", doc["help_seconds"], doc["targets"]["help_seconds"]),
            row(
                "cogolf bot: start to connected",
                doc["bot_connected_seconds"],
                doc["targets"]["bot_connected_seconds"],
            ),
            row("play --in-process --holes 1", play["1"]),
            row("play --in-process --holes 9", play["9"]),
            row("  its CPU, --holes 1", doc["play_in_process_cpu_seconds"]["1"]),
            row("  its CPU, --holes 9", doc["play_in_process_cpu_seconds"]["9"]),
            f"  fixed cost of a play (1 hole minus one hole's share): "
            f"{doc['play_fixed_seconds']:.3f} s wall, "
            f"{100 * doc['play_fixed_share_of_9_holes']:.0f}% of a 9-hole match; "
            f"{doc['play_fixed_cpu_seconds']:.3f} s CPU, "
            f"{100 * doc['play_fixed_cpu_share_of_9_holes']:.0f}%",
        ]
    )
