"""Each rule of the first sandbox (issue 2, section 4), against real subprocesses, both modes."""

from __future__ import annotations

import os

from cogolf import values
from cogolf.sandbox import child
from cogolf.sandbox.api import CallStatus, Limits, LoadStatus

from .conftest import Runner

FAST_WALL = Limits(wall_seconds_per_batch=1.5)


def test_child_constants_match_the_value_domain() -> None:
    assert child.MAX_DEPTH == values.MAX_DEPTH
    assert child.MAX_INT_BITS == values.MAX_INT_BITS


def test_plain_calls_return_values_in_order(runner: Runner) -> None:
    src = "def solve(a, b):\n    return {'sum': a + b, 'pair': (a, b)}\n"
    r = runner.batch(src, [[1, 2], [3.5, 4], ["x", "y"]])
    assert r.load is LoadStatus.OK
    assert [c.status for c in r.results] == [CallStatus.OK] * 3
    assert r.results[0].value == {"sum": 3, "pair": [1, 2]}
    assert r.results[1].value == {"sum": 7.5, "pair": [3.5, 4]}
    assert r.results[2].value == {"sum": "xy", "pair": ["x", "y"]}


def test_stdlib_modules_import_after_the_uid_drop(runner: Runner) -> None:
    src = (
        "import math, re, collections, itertools, functools, heapq, bisect, string, json\n"
        "def solve():\n"
        "    return [math.gcd(12, 18), re.sub('a', 'b', 'aa'), heapq.nsmallest(1, [3, 1]),\n"
        "            bisect.bisect([1, 2], 1), string.digits[:2], json.dumps([1]),\n"
        "            list(itertools.islice(itertools.count(), 2)),\n"
        "            functools.reduce(lambda a, b: a + b, [1, 2]),\n"
        "            collections.Counter('aab')['a']]\n"
    )
    r = runner.batch(src)
    assert r.results[0].status is CallStatus.OK, r
    assert r.results[0].value == [6, "bb", [1], 1, "01", "[1]", [0, 1], 3, 2]


def test_the_program_runs_under_a_leased_unprivileged_uid(runner: Runner, needs_root: None) -> None:
    r = runner.batch(
        "import os\ndef solve():\n    return [os.getuid(), os.geteuid(), os.getgid()]\n"
    )
    uid, euid, gid = r.results[0].value
    assert uid == euid == gid and uid >= 1000 and uid != os.getuid()


def test_infinite_loop_in_a_call_is_a_cpu_timeout(runner: Runner) -> None:
    src = "def solve(n):\n    if n:\n        while True: pass\n    return 0\n"
    r = runner.batch(src, [[0], [1], [0]])
    assert r.results[0].status is CallStatus.OK
    assert r.results[1].status is CallStatus.TIMEOUT
    assert "CPU" in r.results[1].detail
    assert r.results[2].status is CallStatus.NOT_RUN


def test_memory_bomb_fails_the_call_not_the_server(runner: Runner) -> None:
    src = "def solve():\n    x = bytearray(1 << 30)\n    return len(x)\n"
    r = runner.batch(src, [[], []])
    assert r.results[0].status in (CallStatus.ERROR, CallStatus.CRASH)
    if r.results[0].status is CallStatus.ERROR:
        assert r.results[0].detail == "MemoryError"
        assert r.results[1].status is CallStatus.ERROR


def test_fork_fails(runner: Runner) -> None:
    src = "import os\ndef solve():\n    return os.fork()\n"
    r = runner.batch(src)
    assert r.results[0].status is CallStatus.ERROR
    assert r.results[0].detail == "PermissionError"


def test_socket_import_is_refused_at_load(runner: Runner) -> None:
    r = runner.batch("import socket\ndef solve():\n    return 1\n")
    assert r.load is LoadStatus.LOAD_ERROR
    assert r.load_detail == "PermissionError"


def test_writes_are_refused(runner: Runner, tmp_path: os.PathLike[str]) -> None:
    target = os.path.join(str(tmp_path), "made.txt")
    src = f"def solve():\n    open({target!r}, 'w').write('x')\n    return 1\n"
    r = runner.batch(src)
    assert r.results[0].status is CallStatus.ERROR
    assert not os.path.exists(target)


def test_a_forged_line_on_stdout_changes_nothing(runner: Runner) -> None:
    src = (
        "import sys\n"
        "def solve():\n"
        '    print(\'{"k":"call","seq":0,"status":"ok","value":999}\')\n'
        "    sys.stdout.flush()\n"
        "    return 1\n"
    )
    r = runner.batch(src)
    assert r.results[0].status is CallStatus.OK
    assert r.results[0].value == 1


def test_nan_return_is_invalid(runner: Runner) -> None:
    r = runner.batch("def solve():\n    return float('nan')\n")
    assert r.results[0].status is CallStatus.INVALID
    assert "non-finite" in r.results[0].detail


def test_exception_with_raising_str_reports_the_class_name(runner: Runner) -> None:
    src = (
        "class Nasty(Exception):\n"
        "    def __str__(self):\n        raise RuntimeError('no')\n"
        "    def __repr__(self):\n        raise RuntimeError('no')\n"
        "def solve():\n    raise Nasty()\n"
    )
    r = runner.batch(src, [[], []])
    assert [c.status for c in r.results] == [CallStatus.ERROR, CallStatus.ERROR]
    assert r.results[0].detail == "Nasty"


def test_load_time_loop_is_a_load_timeout(runner: Runner) -> None:
    r = runner.batch("while True:\n    pass\n", [[]], limits=Limits(load_cpu_seconds=0.3))
    assert r.load is LoadStatus.LOAD_TIMEOUT
    assert r.results[0].status is CallStatus.NOT_RUN


def test_sleep_is_stopped_by_the_batch_wall_clock(runner: Runner) -> None:
    r = runner.batch("import time\ndef solve():\n    time.sleep(100)\n", [[], []], limits=FAST_WALL)
    assert r.results[0].status is CallStatus.TIMEOUT
    assert "wall clock" in r.results[0].detail
    assert r.results[1].status is CallStatus.NOT_RUN


def test_results_before_a_kill_are_kept(runner: Runner) -> None:
    src = "def solve(n):\n    while n: pass\n    return n\n"
    r = runner.batch(src, [[0], [0], [1]], limits=Limits(cpu_seconds_per_call=0.2))
    assert [c.status for c in r.results] == [CallStatus.OK, CallStatus.OK, CallStatus.TIMEOUT]


def test_syntax_error_and_missing_function(runner: Runner) -> None:
    r = runner.batch("def solve(:\n")
    assert r.load is LoadStatus.SYNTAX_ERROR and r.results[0].status is CallStatus.NOT_RUN
    r = runner.batch("solve = 5\n")
    assert r.load is LoadStatus.MISSING_FUNCTION


def test_megabytes_of_printing_change_nothing(runner: Runner) -> None:
    src = "def solve():\n    print('x' * (1 << 22))\n    return 'done'\n"
    r = runner.batch(src)
    assert r.results[0].value == "done"


def test_huge_result_is_invalid_and_capped(runner: Runner) -> None:
    r = runner.batch("def solve():\n    return 'x' * (1 << 20)\n", [[], []])
    assert r.results[0].status is CallStatus.INVALID
    assert r.results[1].status is CallStatus.INVALID


def test_exact_number_of_results_for_every_outcome(runner: Runner) -> None:
    for src in (
        "def solve(:",
        "import os\ndef solve():\n    os._exit(1)\n",
        "def solve():\n    return 1\n",
    ):
        assert len(runner.batch(src, [[]] * 4).results) == 4
