"""The Racket course runner: one racket process per hole, f called per test in a thread,
the tests handed over one at a time and timed by the parent (`paced`)."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from cogolf.games.golf.holes import Hole, Test
from cogolf.games.golf.runners import protocol
from cogolf.games.golf.runners.base import (
    DEFAULT_LIMITS,
    RunLimits,
    Scratch,
    paced,
    paced_batch,
    spec_for,
)
from cogolf.games.golf.toolchains import racket_binary, racket_harness
from cogolf.games.golf.types import racket_literal
from cogolf.sandbox.api import BatchResult

CHILD = Path(__file__).with_name("child_racket.rkt")


class RacketRunner:
    language = "racket"

    def __init__(self, limits: RunLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.racket = racket_binary()
        self.harness = racket_harness(CHILD)

    async def start(self) -> None:
        return None

    def close(self) -> None:
        return None

    async def run(self, source: bytes, hole: Hole, tests: Sequence[Test]) -> BatchResult:
        token = protocol.new_token()
        header = f'("{token}" {self.limits.per_test_seconds})\n'.encode()
        calls = [("(" + " ".join(racket_literal(a) for a in t.args) + ")\n").encode()
                 for t in tests]
        t0 = time.monotonic()
        with Scratch() as scratch:
            scratch.write({"submission.rkt": source})
            spec = spec_for(
                scratch.path,
                readable=(str(self.harness.parent), "/usr/share/racket", "/etc/racket"),
                max_processes=0,
                memory_bytes=self.limits.memory_bytes,
                cpu_seconds=self.limits.per_hole_seconds,
            )
            done = await paced(
                # -n: no init library in the start-up namespace (the harness makes its own)
                [str(self.racket), "-n", "-u", str(self.harness)],
                header, calls, token, scratch.path, spec, self.limits,
            )
        return paced_batch(done, token, len(tests), time.monotonic() - t0)
