"""The Python course behind real walls: contract, failure reasons, bytes, hostile files."""

from __future__ import annotations

from pathlib import Path

from tests.golf.hostile import listener


def test_passing_def_and_lambda(judge) -> None:
    lam = judge("python", "reverse-string", "f=lambda s:s[::-1]")
    assert lam.status == "passed" and lam.score == 18 and lam.tests_passed == lam.tests_total
    defined = judge("python", "palindrome", "def f(s):\n return s==s[::-1]\n")
    assert defined.status == "passed"


def test_tuples_become_lists_and_ints_are_not_bools(judge) -> None:
    assert judge("python", "sort-abs", "f=lambda x:tuple(sorted(x,key=lambda v:(abs(v),v)))"
                 ).status == "passed"
    wrong = judge("python", "palindrome", "f=lambda s:int(s==s[::-1])")
    assert wrong.reason == "Failed tests" and wrong.tests_passed == 0


def test_each_failure_reason(judge) -> None:
    assert judge("python", "sum-digits", "f=lambda n:(").reason == "Syntax error"
    assert judge("python", "sum-digits", "g=lambda n:n").reason == "Missing function"
    assert judge("python", "sum-digits", "f=lambda n:1/0").reason == "Runtime error"
    assert judge("python", "sum-digits", "raise ValueError").reason == "Runtime error"
    slow = judge("python", "sum-digits", "def f(n):\n while 1:pass\n")
    assert slow.reason == "Timeout" and slow.tests_passed == 0
    partial = judge("python", "sum-digits", "f=lambda n:n%10")
    assert partial.reason == "Failed tests" and 0 < partial.tests_passed < partial.tests_total
    assert partial.score == partial.bytes + 1000 * (1 - partial.correctness) ** 2


def test_bytes_are_raw_utf8_length(judge) -> None:
    src = "f=lambda s:s[::-1] # 逆さま\n"
    result = judge("python", "reverse-string", src)
    assert result.bytes == len(src.encode("utf-8")) == len(src) + 6
    assert judge("python", "reverse-string", b"f=1\xff").reason == "Syntax error"


def test_hostile_file_write_network_fork(judge, tmp_path: Path) -> None:
    target = tmp_path / "owned"
    tmp_path.chmod(0o777)
    write = judge("python", "sum-digits", f"open({str(target)!r},'w').write('x')\nf=lambda n:0")
    assert write.reason == "Runtime error" and not target.exists()
    with listener() as (port, got):
        net = judge("python", "sum-digits",
                    f"import socket\nsocket.create_connection(('127.0.0.1',{port})).send(b'x')\n"
                    "f=lambda n:0")
        assert net.reason == "Runtime error" and got == []
    fork = judge("python", "sum-digits", "import os\nos.fork()\nf=lambda n:0")
    assert fork.reason == "Runtime error"
