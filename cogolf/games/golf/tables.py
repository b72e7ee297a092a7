"""Plain-text tables for the golf commands (the same rows feed the JSON output)."""

from __future__ import annotations

from collections.abc import Sequence

from cogolf.games.golf.leaderboard import CombinedRow, CourseRow, ModelCourse
from cogolf.games.golf.scoring import HoleResult


def render(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> str:
    widths = [max(len(h), *(len(r[i]) for r in rows)) if rows else len(h)
              for i, h in enumerate(headers)]
    def line(cells: Sequence[str]) -> str:
        return "  ".join(c.ljust(w) for c, w in zip(cells, widths, strict=True)).rstrip()
    return "\n".join([line(headers), line(["-" * w for w in widths]), *(line(r) for r in rows)])


def hole_table(holes: Sequence[HoleResult]) -> str:
    rows = [
        [h.hole, h.difficulty, f"{h.score:.2f}", str(h.bytes), f"{h.penalty:.2f}",
         f"{h.tests_passed}/{h.tests_total}", h.status,
         f"FALLBACK ({h.fallback}): {h.reason}" if h.fallback else h.reason]
        for h in holes
    ]
    return render(["Task", "Difficulty", "Score", "Bytes", "Penalty", "Tests", "Status", "Reason"],
                  rows)


def course_table(rows: Sequence[CourseRow]) -> str:
    return render(
        ["Rank", "Model", "Score", "Raw Bytes", "Penalty", "Correctness", "Holes Passed"],
        [[str(r.rank), r.model, f"{r.score:.2f}", str(r.raw_bytes), f"{r.penalty:.2f}",
          r.correctness, f"{r.holes_passed}/{r.holes_total}"] for r in rows],
    )


def combined_table(rows: Sequence[CombinedRow], courses: Sequence[str]) -> str:
    return render(
        ["Rank", "Model", "Total", *courses],
        [["-" if r.rank is None else str(r.rank),
          r.model + (" (incomplete)" if r.missing else ""), f"{r.score:.2f}",
          *(f"{r.courses[c]:.2f}" if c in r.courses else "missing" for c in courses)]
         for r in rows],
    )


def model_table(entries: Sequence[ModelCourse]) -> str:
    return render(
        ["Course", "Rank", "Score", "Holes Passed"],
        [[e.course, f"{e.rank}/{e.of}", f"{e.result.totals.score:.2f}",
          f"{e.result.totals.holes_passed}/{e.result.totals.holes_total}"] for e in entries],
    )
