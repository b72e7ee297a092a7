"""The Python course behind real walls: contract, failure reasons, bytes, hostile files.

Every check runs on the course's runner (the fork sandbox) and on its fallback
(one walled interpreter per hole), which must keep the same contract.
"""

from __future__ import annotations

import asyncio
import os
from collections.abc import Callable
from pathlib import Path

import pytest

from cogolf.games.golf import play
from cogolf.games.golf.courses import get_course
from cogolf.games.golf.holes import HoleSet
from cogolf.games.golf.runners.base import RunLimits
from cogolf.games.golf.runners.python import PythonRunner
from cogolf.games.golf.scoring import HoleResult
from cogolf.sandbox.api import CallStatus
from tests.games.golf.hostile import listener

Judge = Callable[[str, str | bytes], HoleResult]


@pytest.fixture(params=["python", "python-process"])
def pyjudge(request: pytest.FixtureRequest, judge) -> Judge:
    return lambda key, source: judge(request.param, key, source)


def test_the_course_runs_on_the_fork_sandbox_when_it_has_every_wall() -> None:
    runner = PythonRunner()
    try:
        asyncio.run(runner.start())
        # without root the sandbox refuses to start with missing walls: the fallback runs
        assert runner.fallback is (os.geteuid() != 0)
        if not runner.fallback:
            described = runner.sandbox.describe()
            assert described["mode"] == "fork" and not described["weak"]
    finally:
        runner.close()


def test_passing_def_and_lambda(pyjudge: Judge) -> None:
    lam = pyjudge("reverse-string", "f=lambda s:s[::-1]")
    assert lam.status == "passed" and lam.score == 18 and lam.tests_passed == lam.tests_total
    defined = pyjudge("palindrome", "def f(s):\n return s==s[::-1]\n")
    assert defined.status == "passed"


def test_fresh_namespace_per_hole(pyjudge: Judge) -> None:
    # a global left by one run must not be seen by the next
    src = "try:seen\nexcept NameError:seen=0\nelse:raise SystemExit\nf=lambda s:s[::-1]"
    assert pyjudge("reverse-string", src).status == "passed"
    assert pyjudge("reverse-string", src).status == "passed"


def test_tuples_become_lists_and_ints_are_not_bools(pyjudge: Judge) -> None:
    assert pyjudge("sort-abs", "f=lambda x:tuple(sorted(x,key=lambda v:(abs(v),v)))"
                   ).status == "passed"
    wrong = pyjudge("palindrome", "f=lambda s:int(s==s[::-1])")
    assert wrong.reason == "Failed tests" and wrong.tests_passed == 0


def test_each_failure_reason(pyjudge: Judge) -> None:
    assert pyjudge("sum-digits", "f=lambda n:(").reason == "Syntax error"
    assert pyjudge("sum-digits", "g=lambda n:n").reason == "Missing function"
    assert pyjudge("sum-digits", "f=1").reason == "Missing function"
    assert pyjudge("sum-digits", "f=lambda n:1/0").reason == "Runtime error"
    assert pyjudge("sum-digits", "raise ValueError").reason == "Runtime error"
    assert pyjudge("sum-digits", "while 1:pass\nf=lambda n:0").reason == "Timeout"
    partial = pyjudge("sum-digits", "f=lambda n:n%10")
    assert partial.reason == "Failed tests" and 0 < partial.tests_passed < partial.tests_total
    assert partial.score == partial.bytes + 1000 * (1 - partial.correctness) ** 2


def test_a_test_that_times_out_costs_only_itself(pyjudge: Judge) -> None:
    src = "def f(n):\n while n==99:pass\n return sum(map(int,str(n)))\n"
    slow = pyjudge("sum-digits", src)
    assert slow.reason == "Timeout" and slow.tests_passed == slow.tests_total - 1
    # n == 99 is a private test: counted, never shown
    assert all(t.passed for t in slow.tests)
    assert slow.private_passed == slow.private_total - 1


def test_the_hole_has_one_wall_clock_budget(holes: HoleSet) -> None:
    runner = PythonRunner(RunLimits(per_test_seconds=0.2, per_hole_seconds=1.0))
    hole = holes.hole("sum-digits")
    src = b"def f(n):\n while 1:pass\n"
    try:
        batch = asyncio.run(play.run_attempt(runner, hole, src))
    finally:
        runner.close()
    slow = play.judge_attempts(hole, [src], [batch])
    assert slow.reason == "Timeout" and slow.tests_passed == 0
    assert {r.status for r in batch.results} == {CallStatus.TIMEOUT}
    assert batch.results[-1].detail == "the hole ran out of wall time"


def test_bytes_are_raw_utf8_length(pyjudge: Judge) -> None:
    src = "f=lambda s:s[::-1] # 逆さま\n"
    result = pyjudge("reverse-string", src)
    assert result.bytes == len(src.encode("utf-8")) == len(src) + 6
    assert pyjudge("reverse-string", b"f=1\xff").reason == "Syntax error"


def test_source_is_read_as_python_reads_a_file(pyjudge: Judge) -> None:
    bom = b"\xef\xbb\xbff=lambda s:s[::-1]\r\n"
    assert pyjudge("reverse-string", bom).status == "passed"
    assert pyjudge("reverse-string", bom).bytes == len(bom)
    assert pyjudge("reverse-string", b"# coding: nope\nf=lambda s:s").reason == "Syntax error"


def test_hostile_file_write_network_fork(pyjudge: Judge, tmp_path: Path) -> None:
    target = tmp_path / "owned"
    tmp_path.chmod(0o777)
    write = pyjudge("sum-digits", f"open({str(target)!r},'w').write('x')\nf=lambda n:0")
    assert write.reason == "Runtime error" and not target.exists()
    with listener() as (port, got):
        net = pyjudge("sum-digits",
                      f"import socket\nsocket.create_connection(('127.0.0.1',{port})).send(b'x')\n"
                      "f=lambda n:0")
        assert net.reason == "Runtime error" and got == []
    fork = pyjudge("sum-digits", "import os\nos.fork()\nf=lambda n:0")
    assert fork.reason == "Runtime error"


def test_every_module_the_contract_names_can_be_imported(pyjudge: Judge) -> None:
    names = get_course("python").contract.rsplit(": ", 1)[1].rstrip(".").split(", ")
    assert "itertools" in names and "re" in names
    src = "".join(f"import {n}\n" for n in names) + "f=lambda s:s[::-1]\n"
    assert pyjudge("reverse-string", src).status == "passed"
