"""The Rust course runner: compile the file with a generated `main` once, run it once.

The submission's bytes come first, unchanged, so compiler messages point at its
own lines; the harness (`child_rust.rs`), the `N` enum for nested-list holes
and a `main` that reads each test's arguments from stdin and calls f follow.
No test value is compiled in: a compiler message can quote the generated lines,
and they hold only the hole's parameter types. Tests are handed over one at a
time and timed by the parent (`paced`). Compilation runs behind the same walls
as the program, with its own limits.
"""

from __future__ import annotations

import re
import signal
import time
from collections.abc import Sequence
from pathlib import Path
from typing import Any

from cogolf.games.golf.holes import Hole, Test
from cogolf.games.golf.runners import protocol
from cogolf.games.golf.runners.base import (
    DEFAULT_LIMITS,
    RunLimits,
    Scratch,
    cut_at,
    end_detail,
    paced,
    paced_batch,
    spec_for,
    walled,
)
from cogolf.games.golf.runners.walled import ExternalRun
from cogolf.games.golf.toolchains import rust_toolchain
from cogolf.games.golf.types import NEST, RUST_EDITION, RUST_NEST_ENUM, GolfType, rust_type
from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus

CHILD = Path(__file__).with_name("child_rust.rs")
LINKER = "/usr/bin/cc"  # absolute: a PATH search for cc fails behind the walls
MAX_COMPILER_MESSAGE = 2000
_MISSING_F = re.compile(r"cannot find function `f`|cannot find value `f`")


def uses_nest(hole: Hole) -> bool:
    types = [p.type for p in hole.params] + [hole.returns]
    return any(t.kind == NEST or (t.item is not None and t.item.kind == NEST) for t in types)


NEST_READER = (
    "impl golf_harness::W for N {\n"
    "    fn w(r: &mut golf_harness::Rd) -> N {\n"
    "        if r.tag() == b'l' {\n"
    "            let n = r.num(b':');\n"
    "            N::L((0..n).map(|_| <N as golf_harness::W>::w(r)).collect())\n"
    "        } else {\n"
    "            N::I(r.num(b';'))\n"
    "        }\n"
    "    }\n"
    "}\n"
)


def program(source: bytes, hole: Hole) -> bytes:
    """The file to compile: the same for every run of `source` on `hole`."""
    reads = "".join(
        f"        let golf_arg{k}: {rust_type(p.type)} = golf_harness::W::w(&mut rd);\n"
        for k, p in enumerate(hole.params)
    )
    args = ", ".join(f"golf_arg{k}" for k in range(len(hole.params)))
    nest = (
        f"#[allow(dead_code)]\n#[derive(Clone, Debug, PartialEq)]\n{RUST_NEST_ENUM}\n"
        f"#[allow(unused_imports)]\nuse N::*;\n{NEST_READER}"
        if uses_nest(hole)
        else ""
    )
    main = (
        "fn main() {\n"
        "    let mut rd = golf_harness::start();\n"
        "    let mut i = 0usize;\n"
        "    while rd.next_call() {\n"
        + reads
        + f"        golf_harness::run(i, move || f({args}));\n"
        "        i += 1;\n"
        "    }\n"
        "}\n"
    )
    return source + b"\n" + nest.encode() + CHILD.read_bytes() + main.encode()


def wire(t: GolfType, v: Any) -> bytes:
    """A test argument as `child_rust.rs` reads it."""
    if t.kind == "str":
        data = v.encode("utf-8")
        return b"s%d:" % len(data) + data
    if t.kind == "int":
        return b"i%d;" % v
    if t.kind == "bool":
        return b"t" if v else b"f"
    if t.kind == NEST:
        return b"l%d:" % len(v) + b"".join(
            wire(t if type(x) is list else GolfType("int"), x) for x in v
        )
    assert t.item is not None
    return b"l%d:" % len(v) + b"".join(wire(t.item, x) for x in v)


def call_bytes(hole: Hole, test: Test) -> bytes:
    return b"c" + b"".join(wire(p.type, a) for p, a in zip(hole.params, test.args, strict=True))


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
            scratch.write({"main.rs": program(source, hole)})
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
            header = wire(GolfType("str"), token) + wire(GolfType("int"), limit_ms * 1000)
            done = await paced(
                ["./prog"], header, [call_bytes(hole, t) for t in tests], token, scratch.path,
                run_spec, self.limits,
            )
        batch = paced_batch(done, token, len(tests), time.monotonic() - t0)
        return _timer_expiry(batch, done.run)

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
    first = next((i for i, r in enumerate(batch.results) if r.status is CallStatus.CRASH), None)
    return batch if first is None else cut_at(batch, first, "over the per-test CPU time")
