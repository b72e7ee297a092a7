"""Seeded matches whose verdicts must not change when the sandbox gets faster.

Each match pairs two scripted seats of the core deck; most seats play a baseline
with a hostile twist wrapped around its implementation or its tests (a timeout
on some call, a crash, a memory bomb, slow legal answers, answers that depend on
set order and so on the hash seed, state kept from call to call, tests the
reference must judge illegal). Every match is reduced to a digest of everything
it decided (submissions, verdicts with what each defender returned, par results,
scores, the result), wall-clock fields and CPU figures aside.

`verdicts_main.json` beside this file holds the digests the code before the
sandbox's speed work gave, made with

    python -m tests.engine.equivalence tests/engine/verdicts_main.json

and `test_equivalence.py` plays the same matches with today's code and compares.
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import re
import sys
import tempfile
from collections.abc import Callable
from pathlib import Path
from typing import Any

import msgspec

from cogolf.bots.scripted import baseline_play
from cogolf.deck import Deck, load
from cogolf.engine.match import MatchConfig, hash_seed_for
from cogolf.messages import WALL_CLOCK_FIELDS
from cogolf.replay import ReplayWriter, read_replay
from cogolf.runtime.driver import MatchDriver
from cogolf.runtime.local import new_match, replay_header
from cogolf.runtime.seats import InProcessSeat
from cogolf.sandbox import make_sandbox
from cogolf.sandbox.api import Limits, Sandbox

HOLES = 3
# Tighter than the game's, so the hostile seats' timeouts cost little time.
LIMITS = Limits(cpu_seconds_per_call=0.25, load_cpu_seconds=0.5, memory_bytes=128 * 1024 * 1024)
AT_ONCE = 4  # matches played at the same time on the one sandbox

# What a twisted seat wraps around its baseline `solve`. `_n` counts the calls of one
# child, so a twist keyed on it also shows whether calls share a process as before.
_WRAP = """

_solve_base = solve
_n = 0

def solve(*args):
    global _n
    _n += 1
    key = repr(args)
{body}
    return _solve_base(*args)
"""
TWISTS: dict[str, str] = {
    "spin": "    if len(key) % 3 == 0:\n        while True:\n            pass",
    "exit": "    if len(key) % 4 == 1:\n        import os\n        os._exit(3)",
    "bomb": "    if len(key) % 3 == 2:\n        junk = [bytes(1 << 20) for _ in range(400)]",
    "slow": "    import time\n    t = time.process_time()\n"
            "    while time.process_time() - t < 0.08:\n        pass",
    "hashed": "    if len({str(a) for a in args} | {'x', 'y', 'z'}) and "
              "next(iter({'x', 'y', 'z', key})) == key:\n        return None",
    "state": "    if _n > 3:\n        return None",
    "raise": "    if _n % 2 == 0:\n        raise ValueError('no')",
    "load_spin": "    pass",  # and its module never finishes loading (below)
}
_LOAD_SPIN = "\nwhile True:\n    pass\n"
# What a twisted seat does to its tests: keep them, or add ones the reference refuses.
TEST_TWISTS = ("keep", "illegal")
BASES = ("literalist", "pedant")


def _twisted(deck: Deck, base: str, twist: str, tests: str) -> Callable[[dict], dict]:
    def play(observation: dict[str, Any]) -> dict[str, Any]:
        out = baseline_play(deck.public, observation["spec"]["key"], base)
        if twist != "none":
            out["impl"] += _WRAP.format(body=TWISTS[twist])
        if twist == "load_spin":
            out["impl"] += _LOAD_SPIN
        if tests == "illegal" and out["tests"]:
            first = out["tests"][0]
            out["tests"] = [  # first, so the intake keeps them
                dict(first, name="dup"),  # a duplicate of the first
                dict(first, name="wrong", expect=["not", "it"]),  # ref_mismatch
                dict(first, name="arity", args=[*first["args"], 1]),  # arity
                dict(first, name="odd", args=[None] * len(first["args"])),  # ref_error
                *out["tests"],
            ]
        return out

    return play


def seats_for(seed: int) -> tuple[tuple[str, str, str], tuple[str, str, str]]:
    """The two seats of the match with `seed`: (baseline, twist, test twist) each."""
    twists = ["none", *TWISTS]
    a = (BASES[seed % 2], twists[seed % len(twists)], TEST_TWISTS[(seed // 3) % 2])
    b = (BASES[(seed // 2) % 2], twists[(seed * 5 + 2) % len(twists)],
         TEST_TWISTS[(seed // 5) % 2])
    return a, b


SEEDS = tuple(range(1, 31))
_CPU = re.compile(r"used \d+\.\d+ s of CPU")


def _normal(obj: Any) -> Any:
    if isinstance(obj, dict):
        return {k: _normal(v) for k, v in obj.items() if k not in WALL_CLOCK_FIELDS}
    if isinstance(obj, list):
        return [_normal(v) for v in obj]
    if isinstance(obj, str):
        return _CPU.sub("used ? s of CPU", obj)
    return obj


def digest(replay: Path) -> str:
    """What the match decided, wall clock and CPU figures aside."""
    rec = read_replay(replay)
    parts = [msgspec.to_builtins(e) for e in rec.events]
    parts.append(msgspec.to_builtins(rec.result))
    text = json.dumps(_normal(parts), sort_keys=True, separators=(",", ":"))
    return hashlib.sha256(text.encode()).hexdigest()[:24]


async def _one(deck: Deck, sandbox: Sandbox, seed: int, folder: Path) -> str:
    seats = seats_for(seed)
    config = MatchConfig(seed=seed, holes=HOLES, names=tuple("-".join(s) for s in seats))
    match = new_match(deck, config, f"eq-{seed}")
    path = folder / f"eq-{seed}.ndjson"
    with ReplayWriter(path) as writer:
        writer.write(replay_header(match, deck, sandbox))
        policies = [_twisted(deck, *s) for s in seats]
        driver = MatchDriver(match, deck, [InProcessSeat(i, p) for i, p in enumerate(policies)],
                             sandbox, writer, limits=LIMITS)
        await driver.run(None)
    return digest(path)


async def play_all(mode: str = "fork", seeds: tuple[int, ...] = SEEDS) -> dict[str, str]:
    """Digest per seed, the matches played `AT_ONCE` at a time on one sandbox."""
    deck = load()
    sandbox = make_sandbox(mode)
    await sandbox.start()
    # Every hash seed's fork server up before the first match, so no hole's child waits
    # for one to start.
    seeds_used = {hash_seed_for(s) for s in seeds}
    await asyncio.gather(*(sandbox.run_batch("def solve():\n    return 1\n", [[]], hash_seed=h)
                           for h in seeds_used))
    gate = asyncio.Semaphore(AT_ONCE)
    try:
        with tempfile.TemporaryDirectory(prefix="cogolf-equivalence-") as tmp:

            async def gated(seed: int) -> str:
                async with gate:
                    return await _one(deck, sandbox, seed, Path(tmp))

            found = await asyncio.gather(*(gated(s) for s in seeds))
    finally:
        await sandbox.close()
    return {str(s): d for s, d in zip(seeds, found, strict=True)}


def main(argv: list[str]) -> int:
    out = Path(argv[1]) if len(argv) > 1 else None
    doc = {"holes": HOLES, "digests": asyncio.run(play_all())}
    text = json.dumps(doc, indent=1, sort_keys=True) + "\n"
    if out is None:
        sys.stdout.write(text)
    else:
        out.write_text(text)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
