"""Rankings from result documents: per course, combined, and a model's own page.

Pure functions of the documents. A model's best run per course wins (lower
score, then more holes passed, then more tests passed, then fewer raw bytes);
the same order ranks models, and rows equal on all four share a rank.
"""

from __future__ import annotations

from collections.abc import Sequence

import msgspec

from cogolf.games.golf.results import ResultDoc


class CourseRow(msgspec.Struct, frozen=True, kw_only=True):
    rank: int
    model: str
    score: float
    raw_bytes: int
    penalty: float
    tests_passed: int
    tests_total: int
    holes_passed: int
    holes_total: int
    official_bytes: int
    run_id: str
    fallbacks: int = 0  # holes of a live play that were fallbacks, not the model's play

    @property
    def correctness(self) -> str:
        pct = 100.0 * self.tests_passed / self.tests_total if self.tests_total else 0.0
        return f"{pct:.0f}% ({self.tests_passed}/{self.tests_total})"


class CombinedRow(msgspec.Struct, frozen=True, kw_only=True):
    rank: int | None  # None for incomplete models
    model: str
    score: float  # sum over the courses it has
    courses: dict[str, float]
    missing: list[str] = []


class ModelCourse(msgspec.Struct, frozen=True, kw_only=True):
    course: str
    rank: int
    of: int
    result: ResultDoc


def result_key(doc: ResultDoc) -> tuple[float, int, int, int]:
    t = doc.totals
    return (t.score, -t.holes_passed, -t.tests_passed, t.raw_bytes)


def best_per_model(docs: Sequence[ResultDoc], course: str) -> dict[str, ResultDoc]:
    best: dict[str, ResultDoc] = {}
    for d in docs:
        if d.course != course:
            continue
        cur = best.get(d.model)
        if cur is None or (result_key(d), d.created) < (result_key(cur), cur.created):
            best[d.model] = d
    return best


def _ranks(keys: Sequence[object]) -> list[int]:
    """Competition ranking over already sorted keys: equal keys share a rank."""
    ranks: list[int] = []
    for i, k in enumerate(keys):
        ranks.append(ranks[-1] if i and k == keys[i - 1] else i + 1)
    return ranks


def course_board(docs: Sequence[ResultDoc], course: str) -> list[CourseRow]:
    best = sorted(best_per_model(docs, course).values(), key=lambda d: (result_key(d), d.model))
    ranks = _ranks([result_key(d) for d in best])
    return [
        CourseRow(
            rank=r,
            model=d.model,
            score=d.totals.score,
            raw_bytes=d.totals.raw_bytes,
            penalty=d.totals.penalty,
            tests_passed=d.totals.tests_passed,
            tests_total=d.totals.tests_total,
            holes_passed=d.totals.holes_passed,
            holes_total=d.totals.holes_total,
            official_bytes=d.totals.official_bytes,
            run_id=d.run_id,
            fallbacks=d.totals.fallbacks,
        )
        for r, d in zip(ranks, best, strict=True)
    ]


def combined_board(docs: Sequence[ResultDoc], courses: Sequence[str]) -> list[CombinedRow]:
    per_course = {c: best_per_model(docs, c) for c in courses}
    models = sorted({d.model for d in docs if d.course in courses})
    complete, incomplete = [], []
    for m in models:
        have = {c: per_course[c][m].totals.score for c in courses if m in per_course[c]}
        missing = [c for c in courses if c not in have]
        row = (sum(have.values()), m, have, missing)
        (incomplete if missing else complete).append(row)
    complete.sort(key=lambda r: (r[0], r[1]))
    ranks = _ranks([r[0] for r in complete])
    out = [
        CombinedRow(rank=rank, model=m, score=s, courses=have)
        for rank, (s, m, have, _) in zip(ranks, complete, strict=True)
    ]
    incomplete.sort(key=lambda r: (len(r[3]), r[0], r[1]))
    out += [
        CombinedRow(rank=None, model=m, score=s, courses=have, missing=missing)
        for s, m, have, missing in incomplete
    ]
    return out


def model_page(docs: Sequence[ResultDoc], model: str, courses: Sequence[str]) -> list[ModelCourse]:
    out = []
    for c in courses:
        board = course_board(docs, c)
        row = next((r for r in board if r.model == model), None)
        if row is None:
            continue
        out.append(
            ModelCourse(course=c, rank=row.rank, of=len(board),
                        result=best_per_model(docs, c)[model])
        )
    return out
