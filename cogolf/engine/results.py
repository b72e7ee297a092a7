"""What running a program produced, and under which limits, in the engine's own terms.

The engine judges these results and owns their types; the sandbox builds them
(`cogolf.sandbox.api` re-exports them for its callers), so the pure engine never
imports the sandbox. They are also what a replay records, so their fields and
values are part of the replay format.
"""

from __future__ import annotations

from enum import StrEnum
from typing import Any

import msgspec


class LoadStatus(StrEnum):
    OK = "ok"
    SYNTAX_ERROR = "syntax_error"  # the source does not compile
    MISSING_FUNCTION = "missing_function"  # no callable with the requested name
    LOAD_ERROR = "load_error"  # module body raised
    LOAD_TIMEOUT = "load_timeout"  # module body ran out of CPU or wall time
    CRASH = "crash"  # the process died or broke protocol before the module loaded
    HARNESS_ERROR = "harness_error"  # the sandbox itself could not run (not the program's fault)


class CallStatus(StrEnum):
    OK = "ok"  # returned a value (in `value`)
    ERROR = "error"  # raised; `detail` is the exception class name
    TIMEOUT = "timeout"  # ran out of CPU (per call) or the batch ran out of wall time
    INVALID = "invalid"  # returned something that is not a value (NaN, set, subclass...)
    CRASH = "crash"  # the process died, exceeded memory, or broke protocol
    NOT_RUN = "not_run"  # the program never loaded, or the batch ended before this call


class CallResult(msgspec.Struct, frozen=True, kw_only=True):
    status: CallStatus
    value: Any = None  # a canonical value when status is OK
    detail: str = ""  # exception class name, or why the call failed
    cpu_seconds: float = 0.0


class BatchResult(msgspec.Struct, frozen=True, kw_only=True):
    load: LoadStatus
    load_detail: str = ""
    results: list[CallResult] = []
    wall_seconds: float = 0.0


class Limits(msgspec.Struct, frozen=True, kw_only=True):
    cpu_seconds_per_call: float = 1.0
    load_cpu_seconds: float = 2.0
    wall_seconds_per_batch: float = 6.0
    memory_bytes: int = 256 * 1024 * 1024
    max_result_bytes: int = 1024 * 1024  # all result lines of one batch together
    max_result_line_bytes: int = 256 * 1024


DEFAULT_LIMITS = Limits()

MATCH_HASH_SEEDS = (3923502154, 3004387458, 3048740657, 3722798447)
"""The hash seeds matches are given (one each, from its seed): few, so a fork sandbox
can keep an interpreter started for each rather than start one per match."""
