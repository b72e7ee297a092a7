"""The Racket course runner: one racket process per hole, f called per test in a thread."""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

from cogolf.golf.holes import Hole, Test
from cogolf.golf.runners import protocol
from cogolf.golf.runners.base import DEFAULT_LIMITS, RunLimits, Scratch, spec_for, to_batch, walled
from cogolf.golf.toolchains import racket_binary, racket_harness
from cogolf.golf.types import racket_literal
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
        calls = " ".join("(" + " ".join(racket_literal(a) for a in t.args) + ")" for t in tests)
        request = f'("{token}" {self.limits.per_test_seconds} ({calls}))'
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
            run = await walled(
                # -n: no init library in the start-up namespace (the harness makes its own)
                [str(self.racket), "-n", "-u", str(self.harness)],
                request.encode(),
                scratch.path,
                spec,
                cpu_seconds=self.limits.per_hole_seconds,
                wall_seconds=self.limits.per_hole_seconds,
                max_output_bytes=self.limits.max_output_bytes,
            )
        return to_batch(run, token, len(tests), time.monotonic() - t0)
