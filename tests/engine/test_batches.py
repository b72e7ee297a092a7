"""Batches through the real sandbox: one call, or one seat, can only ever cost itself.

Each hostile hole is resolved beside a clean one of the same spec, and what the
hostile side did must leave every other verdict exactly as in the clean run.
"""

from __future__ import annotations

import asyncio
from collections.abc import Sequence
from typing import Any

import pytest

from cogolf.deck import Example, HiddenSpec, Param, Signature, Spec
from cogolf.engine.hole import HoleOutcome
from cogolf.engine.intake import Accepted, AcceptedTest
from cogolf.runtime.resolve import resolve_hole
from cogolf.sandbox import MODES, make_sandbox
from cogolf.sandbox.api import Limits

SPEC = Spec(
    key="double",
    title="Double",
    prompt="Return twice n.",
    signature=Signature(function="solve", params=[Param("n", "int")], returns="int"),
    examples=[Example([1], 2)],
)
# A reference with a trap: it never returns on -1 and kills its process on -2.
REFERENCE = """
import os
def solve(n):
    if n == -1:
        while True:
            pass
    if n == -2:
        os._exit(3)
    return 2 * n
"""
PAR = (Example([1], 2), Example([7], 14), Example([2], 4), Example([3], 6))
HIDDEN = HiddenSpec(reference=REFERENCE, par=PAR, ambiguity="")
HONEST = "def solve(n):\n    return 2 * n\n"
LIMITS = Limits(cpu_seconds_per_call=0.3, wall_seconds_per_batch=1.5)


def play(impl: str, args: Sequence[int]) -> Accepted:
    tests = tuple(AcceptedTest(f"t{i}", [a], 2 * a, "") for i, a in enumerate(args))
    return Accepted(hole=1, impl=impl, tests=tests, note="")


def resolve(*holes: tuple[Accepted, Accepted], mode: str = "fork") -> list[HoleOutcome]:
    """Resolve each pair of plays as one hole, all on one real sandbox."""

    async def main() -> list[HoleOutcome]:
        sandbox = make_sandbox(mode)
        await sandbox.start()
        try:
            return [await resolve_hole(sandbox, SPEC, HIDDEN, list(p), LIMITS) for p in holes]
        finally:
            await sandbox.close()

    return asyncio.run(main())


def verdicts(out: HoleOutcome, author: int) -> list[tuple[Any, ...]]:
    return [
        (s.idx, s.verdict.reason, s.outcome, s.observed) for s in out.shots if s.author == author
    ]


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize("trap", [-1, -2], ids=["ref_timeout", "ref_crash"])
def test_a_test_that_breaks_the_reference_changes_nothing_for_the_other_seat(mode, trap):
    seat1 = play(HONEST, [1, 2, 3])
    hostile_first = play(HONEST, [trap, 4, 5])  # seat 0's tests used to be judged first
    clean = play(HONEST, [4, 5])
    hostile, base = resolve((hostile_first, seat1), (clean, seat1), mode=mode)
    assert verdicts(hostile, 1) == verdicts(base, 1)
    assert [s.verdict.reason for s in hostile.shots if s.author == 1] == ["ok"] * 3
    # and its own later tests are judged on their own too
    reasons = [s.verdict.reason for s in hostile.shots if s.author == 0]
    assert reasons == ["ref_timeout" if trap == -1 else "ref_error", "ok", "ok"]
    assert hostile.illegal == (1, 0) and hostile.score == base.score
    # the same with the seats swapped
    swapped, base_swapped = resolve((seat1, hostile_first), (seat1, clean), mode=mode)
    assert verdicts(swapped, 0) == verdicts(base_swapped, 0)


SLOW_ON_7 = {
    "cpu": "def solve(n):\n    while n == 7:\n        pass\n    return 2 * n\n",
    "sleep": "import time\n"
    "def solve(n):\n    if n == 7:\n        time.sleep(9)\n    return n * 2\n",
    "exit": "import os\ndef solve(n):\n    if n == 7:\n        os._exit(0)\n    return 2 * n\n",
    "forged_line": (
        "import os\ndef solve(n):\n    if n == 7:\n"
        '        os.write(4, b\'{"k":"call","seq":9,"status":"ok","value":1}\\n\')\n'
        "    return 2 * n\n"
    ),
}


@pytest.mark.parametrize("how", sorted(SLOW_ON_7))
def test_one_bad_case_costs_the_defender_that_shot_and_that_par_case_only(how):
    attacker = play(HONEST, [7, 1, 2, 3, 4])
    hostile, base = resolve((attacker, play(SLOW_ON_7[how], [])), (attacker, play(HONEST, [])))
    assert [s.outcome for s in hostile.shots] == ["breach", "held", "held", "held", "held"]
    assert [s.outcome for s in base.shots] == ["held"] * 5
    assert verdicts(hostile, 0)[1:] == verdicts(base, 0)[1:]
    # par: the case 7 fails, the three others hold
    assert hostile.par_fails == (0, 1) and base.par_fails == (0, 0)
    assert hostile.breaches == (1, 0)
