"""The Rust course runner: compile the file with a generated `main` once, run it once.

The submission's bytes come first, unchanged, so compiler messages point at its
own lines; the harness (`child_rust.rs`), the `N` enum for nested-list holes
and a `main` that calls f with every test's arguments as literals follow.
Compilation runs behind the same walls as the program, with its own limits.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Sequence
from pathlib import Path

from cogolf.golf.holes import Hole, Test
from cogolf.golf.runners import protocol
from cogolf.golf.runners.base import (
    DEFAULT_LIMITS,
    RunLimits,
    Scratch,
    end_detail,
    spec_for,
    to_batch,
    walled,
)
from cogolf.golf.runners.walled import ExternalRun
from cogolf.golf.toolchains import rust_toolchain
from cogolf.golf.types import NEST, RUST_EDITION, RUST_NEST_ENUM, rust_literal
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus

CHILD = Path(__file__).with_name("child_rust.rs")
LINKER = "/usr/bin/cc"  # absolute: a PATH search for cc fails behind the walls
MAX_COMPILER_MESSAGE = 2000
_MISSING_F = re.compile(r"cannot find function `f`|cannot find value `f`")


def uses_nest(hole: Hole) -> bool:
    types = [p.type for p in hole.params] + [hole.returns]
    return any(t.kind == NEST or (t.item is not None and t.item.kind == NEST) for t in types)


def program(source: bytes, hole: Hole, tests: Sequence[Test], token: str, limit_ms: int) -> bytes:
    calls = []
    for i, t in enumerate(tests):
        args = ", ".join(rust_literal(p.type, a) for p, a in zip(hole.params, t.args, strict=True))
        calls.append(f"    golf_harness::run({i}, || f({args}));")
    nest = (
        f"#[allow(dead_code)]\n#[derive(Clone, Debug, PartialEq)]\n{RUST_NEST_ENUM}\n"
        "#[allow(unused_imports)]\nuse N::*;\n"
        if uses_nest(hole)
        else ""
    )
    main = (
        "fn main() {\n"
        f'    golf_harness::start("{token}", {limit_ms * 1000});\n'
        + "\n".join(calls)
        + "\n}\n"
    )
    return source + b"\n" + nest.encode() + CHILD.read_bytes() + main.encode()


class RustRunner:
    language = "rust"

    def __init__(self, limits: RunLimits = DEFAULT_LIMITS) -> None:
        self.limits = limits
        self.rust = rust_toolchain()

    async def start(self) -> None:
        return None

    def close(self) -> None:
        return None

    async def run(self, source: bytes, hole: Hole, tests: Sequence[Test]) -> BatchResult:
        token = protocol.new_token()
        limit_ms = int(self.limits.per_test_seconds * 1000)
        t0 = time.monotonic()
        with Scratch() as scratch:
            scratch.write({"main.rs": program(source, hole, tests, token, limit_ms)})
            sysroot = str(self.rust.sysroot)
            compile_spec = spec_for(
                scratch.path,
                readable=(sysroot,),
                executable=(sysroot,),
                max_processes=64,
                memory_bytes=self.limits.compile_memory_bytes,
                cpu_seconds=self.limits.compile_seconds,
            )
            built = await walled(
                [
                    str(self.rust.rustc),
                    "--edition", RUST_EDITION, "--cap-lints", "allow", "--color", "never",
                    "-C", "opt-level=0", "-C", "debuginfo=0", "-C", "codegen-units=1",
                    # the linker then skips the standard library's debug sections (~15 ms)
                    "-C", "strip=debuginfo",
                    "-C", f"linker={LINKER}",
                    "-o", "prog", "main.rs",
                ],
                b"",
                scratch.path,
                compile_spec,
                cpu_seconds=self.limits.compile_seconds,
                wall_seconds=self.limits.compile_seconds,
                max_output_bytes=self.limits.max_output_bytes,
            )
            if built.returncode != 0 or not (scratch.path / "prog").exists():
                return self._compile_failure(built, len(tests), time.monotonic() - t0)
            run_spec = spec_for(
                scratch.path,
                executable=(str(scratch.path),),
                max_processes=0,
                memory_bytes=self.limits.memory_bytes,
                cpu_seconds=self.limits.per_hole_seconds,
            )
            ran = await walled(
                ["./prog"], b"", scratch.path, run_spec,
                cpu_seconds=self.limits.per_hole_seconds,
                wall_seconds=self.limits.per_hole_seconds,
                max_output_bytes=self.limits.max_output_bytes,
            )
        return _timer_expiry(to_batch(ran, token, len(tests), time.monotonic() - t0), ran)

    def _compile_failure(self, built: ExternalRun, n_calls: int, wall: float) -> BatchResult:
        message = built.stderr.decode("utf-8", errors="replace")
        if built.timed_out:
            status, detail = LoadStatus.LOAD_TIMEOUT, "compilation ran out of time"
        elif _MISSING_F.search(message):
            status, detail = LoadStatus.MISSING_FUNCTION, "no function named f"
        elif "error" in message:
            status, detail = LoadStatus.SYNTAX_ERROR, message[:MAX_COMPILER_MESSAGE]
        else:
            status, detail = LoadStatus.CRASH, f"compiler failed: {end_detail(built)}"
        return BatchResult(
            load=status,
            load_detail=detail,
            results=[CallResult(status=CallStatus.NOT_RUN) for _ in range(n_calls)],
            wall_seconds=wall,
        )


def _timer_expiry(batch: BatchResult, ran: ExternalRun) -> BatchResult:
    """The per-test CPU timer ends the process with SIGPROF: the first test without
    a report timed out and the ones after it never ran."""
    if ran.returncode != -signal.SIGPROF or batch.load is not LoadStatus.OK:
        return batch
    results = list(batch.results)
    first = next((i for i, r in enumerate(results) if r.status is CallStatus.CRASH), None)
    if first is None:
        return batch
    results[first] = CallResult(status=CallStatus.TIMEOUT, detail="over the per-test CPU time")
    for i in range(first + 1, len(results)):
        results[i] = CallResult(status=CallStatus.NOT_RUN, detail="an earlier test timed out")
    return BatchResult(load=batch.load, results=results, wall_seconds=batch.wall_seconds)
