"""The proof that harness and holes agree: reference solutions score 100% in every course."""

from __future__ import annotations

import asyncio
from pathlib import Path

import pytest

from cogolf.games.golf.courses import get_course
from cogolf.games.golf.holes import HoleSet
from cogolf.games.golf.play import read_submissions, score_course
from cogolf.games.golf.scoring import course_totals
from tests.games.golf.runners import runner_for

SOLUTIONS = Path(__file__).with_name("solutions")


@pytest.mark.parametrize("course_name", ["python", "racket", "rust"])
def test_reference_solutions_pass_every_test(holes: HoleSet, course_name: str) -> None:
    course = get_course(course_name)
    runner = runner_for(course_name)
    subs = read_submissions(SOLUTIONS / course_name, course, holes)
    assert sorted(subs) == sorted(h.key for h in holes.holes)
    results = asyncio.run(score_course(holes, runner, subs, jobs=2))
    failing = [(r.hole, r.reason, r.detail[:200]) for r in results if r.status != "passed"]
    assert failing == []
    totals = course_totals(results)
    assert totals.tests_passed == totals.tests_total == sum(len(h.scoring) for h in holes.holes)
    assert totals.score == totals.raw_bytes == totals.official_bytes
    on_disk = sum(len((SOLUTIONS / course_name / course.file_name(h.key)).read_bytes())
                  for h in holes.holes)
    assert totals.raw_bytes == on_disk


def test_holes_and_prompts(holes: HoleSet) -> None:
    assert len(holes.holes) == 18
    by_difficulty = {d: [h.key for h in holes.holes if h.difficulty == d]
                     for d in ("easy", "medium", "hard")}
    assert by_difficulty["easy"] == ["reverse-string", "sum-digits", "count-vowels", "palindrome"]
    assert len(by_difficulty["medium"]) == 5 and len(by_difficulty["hard"]) == 9
    lev = holes.hole("levenshtein")
    assert get_course("rust").signature(lev) == "fn f(a: String, b: String) -> i64"
    assert get_course("python").signature(lev) == "def f(a: str, b: str) -> int"
    assert "(f a b)" in get_course("racket").signature(lev)
    assert "enum N" in get_course("rust").signature(holes.hole("nested-sum"))
