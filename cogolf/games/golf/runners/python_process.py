"""The Python course's fallback runner: one walled interpreter per hole.

Used where the fork sandbox cannot start with every wall (no root, say): the
file runs in a fresh namespace under `child_python.py`, which calls f per test
with a CPU timer of its own, behind the same walls as the other courses; the
tests are handed over one at a time and timed by the parent (`paced`), so a
program that stops its own timer still times out.
"""

from __future__ import annotations

import json
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
from cogolf.games.golf.toolchains import python_interpreter
from cogolf.sandbox.api import BatchResult

CHILD = Path(__file__).with_name("child_python.py")


class ProcessPythonRunner:
    language = "python"

    def __init__(self, limits: RunLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.python = python_interpreter()
        self.child = CHILD.read_bytes()

    async def start(self) -> None:
        return None

    def close(self) -> None:
        return None

    async def run(self, source: bytes, hole: Hole, tests: Sequence[Test]) -> BatchResult:
        token = protocol.new_token()
        header = json.dumps({"token": token, "per_test_seconds": self.limits.per_test_seconds})
        calls = [json.dumps(list(t.args)).encode() + b"\n" for t in tests]
        t0 = time.monotonic()
        with Scratch() as scratch:
            scratch.write({"harness.py": self.child, "submission.py": source})
            prefix = str(self.python.resolve().parent.parent)
            spec = spec_for(
                scratch.path,
                readable=(prefix,),
                executable=(prefix,),
                max_processes=0,
                memory_bytes=self.limits.memory_bytes,
                cpu_seconds=self.limits.per_hole_seconds,
            )
            done = await paced(
                [str(self.python), "-I", "-S", "-B", "harness.py"],
                header.encode() + b"\n", calls, token, scratch.path, spec, self.limits,
            )
        return paced_batch(done, token, len(tests), time.monotonic() - t0)
