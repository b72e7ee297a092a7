"""The three courses and their submission contracts.

The hole set is the same in every course; a course says how a file is named,
what it must define, how the signature reads in that language, and which
runner executes it. The prompt text shown to a player comes from here.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cogolf.games.golf.holes import Hole
from cogolf.games.golf.runners.base import DEFAULT_LIMITS, RunLimits, Runner
from cogolf.games.golf.types import (
    NEST,
    RUST_EDITION,
    RUST_NEST_ENUM,
    python_type,
    racket_type,
    rust_type,
)
from cogolf.sandbox.child import PRELOAD as PYTHON_MODULES  # what programs can import


def _python_signature(hole: Hole) -> str:
    params = ", ".join(f"{p.name}: {python_type(p.type)}" for p in hole.params)
    return f"def f({params}) -> {python_type(hole.returns)}"


def _racket_signature(hole: Hole) -> str:
    names = " ".join(p.name for p in hole.params)
    kinds = "; ".join(f"{p.name}: {racket_type(p.type)}" for p in hole.params)
    return f"(f {names}) ; {kinds}; returns: {racket_type(hole.returns)}"


def _rust_signature(hole: Hole) -> str:
    params = ", ".join(f"{p.name}: {rust_type(p.type)}" for p in hole.params)
    sig = f"fn f({params}) -> {rust_type(hole.returns)}"
    if any(p.type.kind == NEST for p in hole.params):
        sig += f"  (the harness defines {RUST_NEST_ENUM} and `use N::*;`)"
    return sig


def _python_runner(limits: RunLimits) -> Runner:
    from cogolf.games.golf.runners.python import PythonRunner

    return PythonRunner(limits)


def _racket_runner(limits: RunLimits) -> Runner:
    from cogolf.games.golf.runners.racket import RacketRunner

    return RacketRunner(limits)


def _rust_runner(limits: RunLimits) -> Runner:
    from cogolf.games.golf.runners.rust import RustRunner

    return RustRunner(limits)


@dataclass(frozen=True)
class Course:
    name: str
    extension: str
    contract: str
    signature: Callable[[Hole], str]
    make_runner: Callable[[RunLimits], Runner]

    def runner(self, limits: RunLimits = DEFAULT_LIMITS) -> Runner:
        return self.make_runner(limits)

    def file_name(self, hole_key: str) -> str:
        return f"{hole_key}.{self.extension}"


COURSES: dict[str, Course] = {
    "python": Course(
        name="python",
        extension="py",
        contract=(
            "Python 3: the file must define f (a def, or a lambda bound to f). It is run in a "
            "fresh namespace and f is called once per test; tuples count as lists. Modules that "
            f"can be imported: {', '.join(PYTHON_MODULES)}."
        ),
        signature=_python_signature,
        make_runner=_python_runner,
    ),
    "racket": Course(
        name="racket",
        extension="rkt",
        contract=(
            "Racket: the file must define a procedure f. No #lang line is needed (the file is "
            "evaluated in a namespace that has racket); a file starting with #lang racket works "
            "too. Lists and vectors count as lists; #t and #f are booleans, never numbers."
        ),
        signature=_racket_signature,
        make_runner=_racket_runner,
    ),
    "rust": Course(
        name="rust",
        extension="rs",
        contract=(
            f"Rust (edition {RUST_EDITION}, std only): the file must define fn f with exactly the "
            "signature given; the harness appends a main that calls f for every test. Lints are "
            "not reported. Any integer type is accepted as an int result."
        ),
        signature=_rust_signature,
        make_runner=_rust_runner,
    ),
}


def get_course(name: str) -> Course:
    try:
        return COURSES[name]
    except KeyError:
        raise ValueError(f"unknown course {name!r}; choose one of {', '.join(COURSES)}") from None
