"""The engine's result constants at their bounds: the statuses a replay records, the
default limits a batch runs under (the result caps on a real pipe: the last size
accepted and the first refused), and the matches' hash seeds as real interpreters take them."""

from __future__ import annotations

import asyncio
import contextlib
import os
import subprocess
import sys
import threading

from cogolf.engine.results import (
    DEFAULT_LIMITS,
    MATCH_HASH_SEEDS,
    CallStatus,
    Limits,
    LoadStatus,
)
from cogolf.sandbox.channel import LineReader, ReadEvent

# PYTHONHASHSEED takes 0..2**32 - 1; a larger value stops the interpreter before it starts.
HASH_SEED_MAX = 2**32 - 1


def test_statuses_are_the_replay_formats_words():
    # A replay stores these strings: renaming one makes every older replay unreadable.
    assert {s.name: s.value for s in LoadStatus} == {
        "OK": "ok", "SYNTAX_ERROR": "syntax_error", "MISSING_FUNCTION": "missing_function",
        "LOAD_ERROR": "load_error", "LOAD_TIMEOUT": "load_timeout", "CRASH": "crash",
        "HARNESS_ERROR": "harness_error",
    }  # fmt: skip
    assert {s.name: s.value for s in CallStatus} == {
        "OK": "ok", "ERROR": "error", "TIMEOUT": "timeout", "INVALID": "invalid",
        "CRASH": "crash", "NOT_RUN": "not_run",
    }  # fmt: skip


def test_default_limits_are_the_documented_ones():
    assert Limits() == DEFAULT_LIMITS
    assert DEFAULT_LIMITS.cpu_seconds_per_call == 1.0
    assert DEFAULT_LIMITS.load_cpu_seconds == 2.0
    assert DEFAULT_LIMITS.wall_seconds_per_batch == 6.0
    assert DEFAULT_LIMITS.memory_bytes == 256 * 1024 * 1024
    assert DEFAULT_LIMITS.max_result_bytes == 1024 * 1024
    assert DEFAULT_LIMITS.max_result_line_bytes == 256 * 1024
    # One call's CPU and the module's load both fit in the batch's wall time; a line fits
    # in the batch's total.
    limits = DEFAULT_LIMITS
    assert limits.cpu_seconds_per_call + limits.load_cpu_seconds < limits.wall_seconds_per_batch
    assert limits.max_result_line_bytes < limits.max_result_bytes


def _read_all(data: bytes, limits: Limits) -> list[bytes | ReadEvent]:
    """Every line (and the final event) a reader with `limits`' caps gives for `data`
    written into a real pipe by another thread, then closed."""
    r, w = os.pipe()

    def feed() -> None:
        view = memoryview(data)
        with contextlib.suppress(BrokenPipeError):  # the reader stopped at a cap: closed
            while view:
                view = view[os.write(w, view) :]
        os.close(w)

    async def go() -> list[bytes | ReadEvent]:
        reader = LineReader(
            r, max_line=limits.max_result_line_bytes, max_total=limits.max_result_bytes
        )
        writer = threading.Thread(target=feed)
        writer.start()
        got: list[bytes | ReadEvent] = []
        try:
            while True:
                item = await reader.readline(10.0)
                got.append(item)
                if isinstance(item, ReadEvent):
                    return got
        finally:
            os.close(r)
            await asyncio.to_thread(writer.join)

    return asyncio.run(go())


def test_a_result_line_may_be_exactly_max_result_line_bytes_long():
    cap = DEFAULT_LIMITS.max_result_line_bytes
    assert _read_all(b"x" * cap + b"\n", DEFAULT_LIMITS) == [b"x" * cap, ReadEvent.EOF]
    assert _read_all(b"x" * (cap + 1) + b"\n", DEFAULT_LIMITS)[-1] is ReadEvent.OVERFLOW


def test_a_batch_may_send_exactly_max_result_bytes():
    total, line = DEFAULT_LIMITS.max_result_bytes, DEFAULT_LIMITS.max_result_line_bytes
    chunk = b"y" * (line // 2 - 1) + b"\n"  # lines well within the line cap
    count, rest = divmod(total, len(chunk))
    exact = chunk * count + (b"z" * (rest - 1) + b"\n" if rest else b"")
    assert len(exact) == total
    got = _read_all(exact, DEFAULT_LIMITS)
    assert got[-1] is ReadEvent.EOF and len(got) == count + bool(rest) + 1
    assert _read_all(exact + b"\n", DEFAULT_LIMITS)[-1] is ReadEvent.OVERFLOW


def test_match_hash_seeds_are_distinct_and_each_starts_an_interpreter():
    assert len(set(MATCH_HASH_SEEDS)) == len(MATCH_HASH_SEEDS) == 4
    assert all(0 <= s <= HASH_SEED_MAX for s in MATCH_HASH_SEEDS)
    code = "print(hash('cogolf'))"

    def hashed(seed: int) -> subprocess.CompletedProcess[str]:
        env = {**os.environ, "PYTHONHASHSEED": str(seed)}
        return subprocess.run(
            [sys.executable, "-c", code], env=env, capture_output=True, text=True,
            timeout=60,
        )  # fmt: skip

    runs = {s: hashed(s) for s in MATCH_HASH_SEEDS}
    assert all(p.returncode == 0 for p in runs.values())
    # Each seed gives its own, repeatable string hashes.
    assert len({p.stdout for p in runs.values()}) == len(MATCH_HASH_SEEDS)
    first = MATCH_HASH_SEEDS[0]
    assert hashed(first).stdout == runs[first].stdout
    # The bound itself: the largest seed is taken, one more is refused.
    assert hashed(HASH_SEED_MAX).returncode == 0
    assert hashed(HASH_SEED_MAX + 1).returncode != 0
