"""Reference workers: one walled child serves many batches of a trusted program, and
no verdict shows its history (a failure from a worker with a past is run again afresh)."""

from __future__ import annotations

import asyncio
import contextlib
import itertools
from typing import Any

from cogolf.sandbox import workers as workers_module
from cogolf.sandbox.api import CallStatus, Limits, LoadStatus
from tests.polling import until

LIMITS = Limits(cpu_seconds_per_call=0.3, wall_seconds_per_batch=3.0)
_unique = itertools.count()


def source(body: str) -> str:
    """A program text no other test shares, so each test gets workers of its own."""
    return f"# {next(_unique)}\n{body}"


def trusted(runner: Any, src: str, calls: list[list[Any]], limits: Limits = LIMITS) -> Any:
    return runner.loop.run(runner.sandbox.run_batch(src, calls, limits=limits, trusted=True))


def counts(runner: Any) -> tuple[int, int]:
    w = runner.sandbox.workers
    return w.started, w.reused


PURE = "def solve(n):\n    return [n, n * n]\n"


def test_a_trusted_program_is_loaded_once_and_answers_as_a_fresh_child(runner):
    src = source(PURE)
    started, reused = counts(runner)
    got = [trusted(runner, src, [[i], [i + 1]]) for i in range(3)]
    assert counts(runner) == (started + 1, reused + 2)
    fresh = runner.batch(src, [[2], [3]], limits=LIMITS)  # untrusted: a child of its own
    assert counts(runner) == (started + 1, reused + 2)
    assert [r.value for r in got[2].results] == [r.value for r in fresh.results] == [[2, 4],
                                                                                      [3, 9]]


def test_a_worker_with_a_past_never_gives_a_failure_a_fresh_child_would_not(runner):
    """An impure reference that fails once it has answered three calls: a fresh child
    running any batch of two never fails, and neither does any batch through workers."""
    src = source("_n = 0\ndef solve(x):\n    global _n\n    _n += 1\n"
                 "    if _n > 3:\n        raise ValueError('tired')\n    return x\n")
    started, _ = counts(runner)
    for i in range(4):
        batch = trusted(runner, src, [[i], [i + 10]])
        assert [r.status for r in batch.results] == [CallStatus.OK] * 2, batch
        assert [r.value for r in batch.results] == [i, i + 10]
    # batch 2 refused on its second call, ran it afresh (a new worker), and so on
    assert counts(runner)[0] >= started + 2


def test_a_trap_in_the_reference_costs_that_call_only(runner):
    src = source("def solve(n):\n    while n == -1:\n        pass\n    return 2 * n\n")
    trusted(runner, src, [[1]])  # the worker now has a past
    batch = trusted(runner, src, [[1], [-1], [2]])
    fresh = runner.batch(src, [[1], [-1], [2]], limits=LIMITS)
    assert [r.status for r in batch.results] == [CallStatus.OK, CallStatus.TIMEOUT,
                                                 CallStatus.NOT_RUN]
    assert [r.status for r in batch.results] == [r.status for r in fresh.results]
    assert batch.results[1].detail.startswith("used ") and "CPU" in batch.results[1].detail
    # the killed worker is gone: the next batch starts another
    started, _ = counts(runner)
    assert trusted(runner, src, [[2]]).results[0].value == 4
    assert counts(runner)[0] == started + 1


def test_a_program_that_does_not_load_is_said_so_and_its_worker_retired(runner):
    src = source("def solve(:\n")
    started, _ = counts(runner)
    for _ in range(2):
        batch = trusted(runner, src, [[1]])
        assert batch.load is LoadStatus.SYNTAX_ERROR
    assert counts(runner)[0] == started + 2


def test_workers_are_kept_per_program_limits_and_hash_seed(runner):
    src = source(PURE)
    started, _ = counts(runner)
    trusted(runner, src, [[1]])
    trusted(runner, src, [[1]], Limits(cpu_seconds_per_call=0.2))
    runner.loop.run(runner.sandbox.run_batch(src, [[1]], limits=LIMITS, trusted=True,
                                             hash_seed=7))
    trusted(runner, source(PURE), [[1]])
    assert counts(runner)[0] == started + 4


def test_the_calls_a_worker_answers_are_bounded(runner):
    src = source(PURE)
    started, reused = counts(runner)
    too_many = [[i] for i in range(workers_module.MAX_CALLS + 1)]
    batch = trusted(runner, src, too_many)  # first refused: a child of its own
    assert batch.results[-1].value == [len(too_many) - 1, (len(too_many) - 1) ** 2]
    assert counts(runner) == (started, reused)
    trusted(runner, src, too_many[:-1])  # last accepted: then spent
    trusted(runner, src, [[1]])
    assert counts(runner) == (started + 2, reused)


def test_a_worker_that_grew_is_retired(runner):
    src = source("_keep = []\ndef solve(n):\n    _keep.append(bytearray(n))\n    return 1\n")
    started, reused = counts(runner)
    trusted(runner, src, [[1 << 20]])  # grows a little: kept
    trusted(runner, src, [[workers_module.MAX_GROWTH + (4 << 20)]])  # past the bound: retired
    trusted(runner, src, [[1]])
    assert counts(runner) == (started + 2, reused + 1)


def test_an_idle_worker_is_retired(runner, monkeypatch):
    src = source(PURE)
    started, _ = counts(runner)
    trusted(runner, src, [[1]])
    monkeypatch.setattr(workers_module, "IDLE_SECONDS", 0.0)
    trusted(runner, src, [[1]])
    assert counts(runner)[0] == started + 2


def test_an_untrusted_program_never_shares_a_child(runner):
    """A seat's program keeps state between its calls, never between batches."""
    src = source("_n = 0\ndef solve():\n    global _n\n    _n += 1\n    return _n\n")
    started, reused = counts(runner)
    for _ in range(3):
        assert [r.value for r in runner.batch(src, [[], []]).results] == [1, 2]
    assert counts(runner) == (started, reused)


def test_the_workers_kept_at_once_are_bounded(runner):
    w = runner.sandbox.workers
    for _ in range(workers_module.MAX_WORKERS + 3):
        trusted(runner, source(PURE), [[1]])
    assert len(w._idle) + len(w._busy) == workers_module.MAX_WORKERS


def test_a_slow_answer_from_a_reused_worker_is_checked_in_a_fresh_one(runner):
    """Past half its CPU budget a call might owe its speed to a warm worker: it is run
    again where a fresh child would run it. Up to half, the worker's answer stands."""
    src = source("import time\ndef solve(t):\n    s = time.process_time()\n"
                 "    while time.process_time() - s < t:\n        pass\n    return t\n")
    half = LIMITS.cpu_seconds_per_call * workers_module.SLOW_SHARE
    trusted(runner, src, [[0.0]])
    started, _ = counts(runner)
    assert trusted(runner, src, [[0.0], [half * 0.3]]).results[1].value == half * 0.3
    assert counts(runner)[0] == started
    batch = trusted(runner, src, [[0.0], [half * 1.4], [0.0]])
    assert [r.value for r in batch.results] == [0.0, half * 1.4, 0.0]
    assert counts(runner)[0] == started + 1


def test_a_batch_cancelled_midway_retires_its_worker(runner):
    """A match that ends mid-batch leaves no worker behind, busy or with a call half
    answered; the next batch gets a fresh one."""
    src = source("import time\ndef solve(t):\n    time.sleep(t)\n    return t\n")
    trusted(runner, src, [[0.0]])
    started, _ = counts(runner)

    async def cancel() -> None:
        task = asyncio.ensure_future(
            runner.sandbox.run_batch(src, [[1.0]], limits=LIMITS, trusted=True))
        # Cancelled once a worker has the call, well inside its second of sleep.
        await until(lambda: bool(runner.sandbox.workers._busy), "a worker takes the batch")
        task.cancel()
        with contextlib.suppress(asyncio.CancelledError):
            await task

    runner.loop.run(cancel())
    assert not runner.sandbox.workers._busy
    assert trusted(runner, src, [[0.0]]).results[0].value == 0.0
    assert counts(runner)[0] == started + 1
