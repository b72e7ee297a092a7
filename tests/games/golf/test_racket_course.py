"""The Racket course behind real walls (skipped only outside CI without racket)."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from tests.games.golf.hostile import listener
from tests.games.golf.runners import need_racket, runner_for

pytestmark = pytest.mark.usefixtures("racket_present")


@pytest.fixture
def racket_present() -> None:
    need_racket()


def test_file_without_and_with_lang(judge) -> None:
    plain = judge("racket", "reverse-string",
                  "(define(f s)(list->string(reverse(string->list s))))")
    assert plain.status == "passed"
    lang = judge("racket", "reverse-string",
                 "#lang racket\n(define (f s) (list->string (reverse (string->list s))))\n")
    assert lang.status == "passed"
    # a name only full `racket` has (racket/set) still works without #lang
    full = judge("racket", "unique-preserve",
                 "(define(f x)(let l([x x][s(set)])(cond[(null? x)'()]"
                 "[(set-member? s(car x))(l(cdr x)s)]"
                 "[else(cons(car x)(l(cdr x)(set-add s(car x))))])))")
    assert full.status == "passed"


def test_vectors_are_lists_and_true_is_not_one(judge) -> None:
    vec = judge("racket", "sort-abs", "(define(f x)(list->vector(sort(sort x <)< #:key abs)))")
    assert vec.status == "passed"
    ones = judge("racket", "palindrome",
                 "(define(f s)(if(equal? s(list->string(reverse(string->list s))))1 0))")
    assert ones.reason == "Failed tests" and ones.tests_passed == 0


def test_each_failure_reason(judge) -> None:
    assert judge("racket", "sum-digits", "(define (f n)").reason == "Syntax error"
    assert judge("racket", "sum-digits", "(define (g n) n)").reason == "Missing function"
    assert judge("racket", "sum-digits", "(define (f n) (car n))").reason == "Runtime error"
    assert judge("racket", "sum-digits", "(define f 5)").reason == "Missing function"
    slow = judge("racket", "sum-digits", "(define (f n) (let l () (l)))")
    assert slow.reason == "Timeout"
    partial = judge("racket", "sum-digits", "(define (f n) (modulo n 10))")
    assert partial.reason == "Failed tests" and 0 < partial.tests_passed < partial.tests_total


def test_bytes_of_multibyte_file(judge) -> None:
    src = "(define (f s) (list->string (reverse (string->list s)))) ; λ\n"
    assert judge("racket", "reverse-string", src).bytes == len(src.encode()) == len(src) + 1


def test_hostile_file_write_network_fork(judge, tmp_path: Path) -> None:
    tmp_path.chmod(0o777)
    target = tmp_path / "owned"
    write = judge("racket", "sum-digits",
                  f'(define (f n) (with-output-to-file "{target}" (lambda () (display 1))) 0)')
    assert write.reason == "Runtime error" and not target.exists()
    with listener() as (port, got):
        net = judge("racket", "sum-digits",
                    f'(define (f n) (define-values (i o) (tcp-connect "127.0.0.1" {port})) 0)')
        assert net.reason == "Runtime error" and got == []
    fork = judge("racket", "sum-digits",
                 '(define (f n) (define-values (p o i e) (subprocess #f #f #f "/bin/true")) 0)')
    assert fork.reason == "Runtime error"


def test_the_harness_token_and_stdout_are_out_of_reach(judge) -> None:
    # Worst case: the file knows where the harness is and asks for its module namespace.
    harness = json.dumps(str(runner_for("racket").harness))  # type: ignore[attr-defined]
    src = (
        "(define (peek name)\n"
        "  (with-handlers ([(lambda (e) #t) (lambda (e) \"hidden\")])\n"
        f"    (format \"~a\" (eval name (module->namespace (string->path {harness}))))))\n"
        "(define (f s) (string-append (peek 'token) (peek 'out) (peek 'limit)))\n"
    )
    result = judge("racket", "reverse-string", src)
    assert result.reason == "Failed tests"
    assert {t.got for t in result.tests} == {'"hiddenhiddenhidden"'}
