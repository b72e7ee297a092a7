"""The Rust course behind real walls: compile step, failure reasons, hostile files."""

from __future__ import annotations

from pathlib import Path

from tests.games.golf.hostile import listener

REV = "fn f(s:String)->String{s.chars().rev().collect()}"


def test_passing_file_and_nest_enum(judge) -> None:
    rev = judge("rust", "reverse-string", REV)
    assert rev.status == "passed", (rev.reason, rev.detail, rev.tests[:2])
    flat = judge("rust", "flatten",
                 "fn f(x:Vec<N>)->Vec<i64>{x.into_iter().flat_map(|e|match e{I(v)=>vec![v],"
                 "L(l)=>f(l)}).collect()}")
    assert flat.status == "passed"


def test_each_failure_reason(judge) -> None:
    broken = judge("rust", "sum-digits", "fn f(n:i64)->i64{n+}")
    assert broken.reason == "Syntax error" and "error" in broken.detail
    assert judge("rust", "sum-digits", "fn g(n:i64)->i64{n}").reason == "Missing function"
    mismatch = judge("rust", "sum-digits", "fn f(n:&str)->i64{0}")
    assert mismatch.reason == "Syntax error"
    panics = judge("rust", "sum-digits", "fn f(n:i64)->i64{if n>100{panic!()}n}")
    assert panics.reason == "Runtime error" and panics.tests_passed > 0
    slow = judge("rust", "sum-digits", "fn f(n:i64)->i64{loop{}}")
    assert slow.reason == "Timeout" and slow.tests_passed == 0
    partial = judge("rust", "sum-digits", "fn f(n:i64)->i64{n%10}")
    assert partial.reason == "Failed tests" and 0 < partial.tests_passed < partial.tests_total


def test_bytes_of_multibyte_file(judge) -> None:
    src = REV + "// ↩\n"
    assert judge("rust", "reverse-string", src).bytes == len(src.encode()) == len(src) + 2


def test_hostile_file_write_network_fork_and_compile_time_read(judge, tmp_path: Path) -> None:
    tmp_path.chmod(0o777)
    target = tmp_path / "owned"
    write = judge("rust", "sum-digits",
                  f'fn f(n:i64)->i64{{std::fs::write("{target}","x").unwrap();n}}')
    assert write.reason == "Runtime error", (write.detail, write.tests[:2])
    assert not target.exists()
    with listener() as (port, got):
        net = judge("rust", "sum-digits",
                    f'fn f(n:i64)->i64{{std::net::TcpStream::connect("127.0.0.1:{port}")'
                    ".unwrap();n}")
        assert net.reason == "Runtime error" and got == []
    fork = judge("rust", "sum-digits",
                 'fn f(n:i64)->i64{std::process::Command::new("/bin/true").status().unwrap();n}')
    assert fork.reason == "Runtime error"
    secret = tmp_path / "secret.txt"
    secret.write_text("1")
    secret.chmod(0o644)
    read = judge("rust", "sum-digits", f'fn f(n:i64)->i64{{include_str!("{secret}").len()as i64}}')
    assert read.reason == "Syntax error"
