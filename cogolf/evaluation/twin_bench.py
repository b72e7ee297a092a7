"""What twins cost: a scoring step timed with and without them, interleaved (A, B, B, A,
...) so that a machine whose load drifts during the run weighs on both sides alike.
Besides wall seconds, the CPU seconds of this process and of its waited-for children
(the walled builds and test runs): on a loaded machine those vary much less.

Used by `cogolf bench commit0` and `cogolf bench project`; switching twins off is
for these benchmarks only (scoring always plants them, and says how many).
"""

from __future__ import annotations

import resource
import statistics
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from typing import Any


def _cpu() -> float:
    own, children = (resource.getrusage(w) for w in (resource.RUSAGE_SELF,
                                                      resource.RUSAGE_CHILDREN))
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


@dataclass
class TwinCost:
    seconds: dict[bool, list[float]] = field(default_factory=lambda: {True: [], False: []})
    cpu: dict[bool, list[float]] = field(default_factory=lambda: {True: [], False: []})
    last: dict[str, Any] = field(default_factory=dict)  # the last result with twins
    last_without: dict[str, Any] = field(default_factory=dict)  # and without

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {}
        for what, runs in (("seconds", self.seconds), ("cpu", self.cpu)):
            for twins, name in ((True, "with_twins"), (False, "without")):
                out[f"{what}_{name}"] = [round(s, 3) for s in runs[twins]]
                out[f"{what}_min_{name}"] = round(min(runs[twins]), 3)
                out[f"{what}_median_{name}"] = round(statistics.median(runs[twins]), 3)
            on, off = (out[f"{what}_median_{n}"] for n in ("with_twins", "without"))
            out[f"{what}_ratio"] = round(on / off, 3) if off else None
        return out


async def interleaved(step: Callable[[bool], Awaitable[dict[str, Any]]],
                      repeat: int) -> TwinCost:
    """`step(twins)` scores once, with twins or without, and returns its result document."""
    cost = TwinCost()
    for i in range(repeat):
        for twins in ((True, False) if i % 2 == 0 else (False, True)):
            started, cpu = time.monotonic(), _cpu()
            result = await step(twins)
            cost.seconds[twins].append(time.monotonic() - started)
            cost.cpu[twins].append(_cpu() - cpu)
            if twins:
                cost.last = result
            else:
                cost.last_without = result
    return cost


def cost_lines(cost: dict[str, Any]) -> list[str]:
    return [f"{label} with twins min {cost[f'{what}_min_with_twins']:.2f}s median "
            f"{cost[f'{what}_median_with_twins']:.2f}s | without min "
            f"{cost[f'{what}_min_without']:.2f}s median {cost[f'{what}_median_without']:.2f}s"
            f" | ratio of medians {cost[f'{what}_ratio']}"
            for what, label in (("seconds", "wall:"), ("cpu", "cpu: "))]
