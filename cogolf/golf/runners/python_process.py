"""The Python course's fallback runner: one walled interpreter per hole.

Used where the fork sandbox cannot start with every wall (no root, say): the
file runs in a fresh namespace under `child_python.py`, which calls f per test
with a CPU timer of its own, behind the same walls as the other courses.
"""

from __future__ import annotations

import json
import time
from collections.abc import Sequence
from pathlib import Path

from cogolf.golf.holes import Hole, Test
from cogolf.golf.runners import protocol
from cogolf.golf.runners.base import DEFAULT_LIMITS, RunLimits, Scratch, spec_for, to_batch, walled
from cogolf.golf.toolchains import python_interpreter
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
        request = {
            "token": token,
            "per_test_seconds": self.limits.per_test_seconds,
            "calls": [list(t.args) for t in tests],
        }
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
            run = await walled(
                [str(self.python), "-I", "-S", "-B", "harness.py"],
                json.dumps(request).encode(),
                scratch.path,
                spec,
                cpu_seconds=self.limits.per_hole_seconds,
                wall_seconds=self.limits.per_hole_seconds,
                max_output_bytes=self.limits.max_output_bytes,
            )
        return to_batch(run, token, len(tests), time.monotonic() - t0)
