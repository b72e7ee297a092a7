"""Golf in a league night: every entrant's submitted files scored on the night's courses.

    [golf]
    courses = ["python", "racket"]
    per_test_seconds = 2.0
    [[entrant]]
    golf = "subs/alice/golf/{course}/"

A result is golf's own result document (`<entrant>.<course>.<night>.json`), so
`cogolf golf leaderboard` reads a night's `golf/` folder as it is. A kept result
must be of the same entrant, course and hole set.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from cogolf import safejson
from cogolf.game import (
    GamePlan,
    GameTable,
    JobFault,
    NightJob,
    NightSetup,
    ResultFileError,
    Section,
    SectionError,
    SectionProblems,
)
from cogolf.games.golf.courses import COURSES, get_course
from cogolf.games.golf.holes import HoleSet, load_holes
from cogolf.games.golf.leaderboard import combined_board, course_board
from cogolf.games.golf.play import (
    SubmissionError,
    mark_fallbacks,
    read_fallbacks,
    read_submissions,
    score_course,
)
from cogolf.games.golf.results import (
    ResultDoc,
    ResultError,
    file_name,
    new_result,
    read_result,
    write_result,
)
from cogolf.games.golf.runners.base import DEFAULT_LIMITS, RunLimits, Runner
from cogolf.games.golf.toolchains import ToolchainError
from cogolf.gametables import keep, round6, void_lines
from cogolf.grid import grid
from cogolf.text import clip

MAX_GOLF_TEST_SECONDS = 60.0
MAX_GOLF_HOLE_SECONDS = 600.0
MAX_RESULT_BYTES = 8 * 1024 * 1024
NAME_WIDTH = 20


@dataclass(frozen=True)
class GolfSection:
    courses: tuple[str, ...]
    per_test_seconds: float = DEFAULT_LIMITS.per_test_seconds
    per_hole_seconds: float = DEFAULT_LIMITS.per_hole_seconds

    @property
    def limits(self) -> RunLimits:
        return RunLimits(per_test_seconds=self.per_test_seconds,
                         per_hole_seconds=self.per_hole_seconds)


def read_golf(path: Path, night: str) -> ResultDoc:
    """A golf result of this night; ResultError (naming the field) otherwise."""
    try:
        with open(path, "rb") as f:
            safejson.check_bytes(f.read(MAX_RESULT_BYTES + 1), max_bytes=MAX_RESULT_BYTES)
    except OSError as exc:
        raise ResultError(f"{path}: cannot read ({exc.strerror})") from None
    except ValueError as exc:
        raise ResultError(f"{path}: {exc}") from None
    doc = read_result(path)
    if doc.run_id != night:
        raise ResultError(f"{path}: run_id: {doc.run_id!r} is not the night {night!r}")
    if path.name != file_name(doc):
        raise ResultError(f"{path}: the file name does not match its result "
                          f"(model {doc.model!r}, course {doc.course!r}: {file_name(doc)})")
    return doc


class GolfSession:
    """The night's hole set and one runner per course, shared by every job."""

    def __init__(self, plan: GamePlan, night: str) -> None:
        self.night = night
        self.holes: HoleSet = load_holes()
        limits: RunLimits = plan.state
        self.runners: dict[str, Runner] = {c: get_course(c).runner(limits) for c in plan.items}

    async def prepare(self) -> None:
        return None

    def close(self) -> None:
        """Stop what the runners started (the Python course keeps a fork sandbox)."""
        for runner in self.runners.values():
            runner.close()

    def kept(self, job: NightJob, path: Path) -> bool:
        doc = read_golf(path, self.night)
        return (doc.model, doc.course, doc.holes_version, len(doc.holes)) == (
            job.entrant, job.item, self.holes.version, len(self.holes.holes))

    async def play(self, job: NightJob, path: Path) -> str:
        course = get_course(job.item)
        try:
            subs = read_submissions(job.submission, course, self.holes)
        except SubmissionError as exc:
            raise JobFault(f"bad submission: {exc}", retry=False) from None
        results = await score_course(self.holes, self.runners[job.item], subs)
        # A folder written from an LLM entrant's live play says which holes were fallbacks.
        results = mark_fallbacks(results, read_fallbacks(job.submission, self.holes))
        doc = new_result(job.entrant, job.item, self.holes.version, results, run_id=self.night)
        written = write_result(path.parent, doc)
        assert written == path, (written, path)
        t = doc.totals
        fell = f", fallbacks {t.fallbacks}" if t.fallbacks else ""
        return f"score {t.score:.2f}, holes passed {t.holes_passed}/{t.holes_total}{fell}"


def _row(r: Any) -> dict[str, Any]:
    d = msgspec.to_builtins(r)
    d["entrant"] = d.pop("model")
    d.pop("run_id", None)  # the night's name, for every row
    for k in ("score", "penalty"):
        if k in d:
            d[k] = round6(d[k])
    if "courses" in d:
        d["courses"] = {c: round6(v) for c, v in sorted(d["courses"].items())}
    return d


def _pct(p: int, t: int) -> str:
    return f"{100.0 * p / t:.0f}%" if t else "0%"


class GolfNight:
    name = "golf"
    fields = ("courses", "per_test_seconds", "per_hole_seconds")
    placeholders = ("course",)
    with_attempts = False
    patch_files = False

    def parse_section(self, section: Section, base: Path) -> GolfSection:
        courses = section.string_list("courses", required=True)
        problems = []
        for i, course in enumerate(courses):
            if course not in COURSES:
                problems.append(SectionError(("courses", i), f"unknown course {course!r} "
                                             f"(expected one of: {', '.join(COURSES)})"))
            elif courses.index(course) != i:
                problems.append(SectionError(("courses", i), f"{course!r} is listed twice"))
        if problems:
            raise SectionProblems(problems)
        return GolfSection(
            courses=tuple(courses),
            per_test_seconds=section.number("per_test_seconds", DEFAULT_LIMITS.per_test_seconds,
                                            MAX_GOLF_TEST_SECONDS),
            per_hole_seconds=section.number("per_hole_seconds", DEFAULT_LIMITS.per_hole_seconds,
                                            MAX_GOLF_HOLE_SECONDS),
        )

    def plan(self, settings: GolfSection, *, check_toolchains: bool) -> GamePlan:
        if check_toolchains:
            for i, course in enumerate(settings.courses):
                try:
                    get_course(course).runner(settings.limits)
                except ToolchainError as exc:
                    raise SectionError(("courses", i), f"cannot run {course}: {exc}") from None
        return GamePlan(settings.courses, 0, settings.limits)

    def template_fields(self, item: str, attempt: int) -> dict[str, str | int]:
        return {"course": item}

    def result_name(self, entrant: str, item: str, attempt: int, night: str) -> str:
        return f"{entrant}.{item}.{night}.json"

    def session(self, plan: GamePlan, night_dir: Path, night: str) -> GolfSession:
        return GolfSession(plan, night)

    def read_result(self, path: Path, night: str, source: str) -> ResultDoc:
        try:
            return read_golf(path, night)
        except ResultError as exc:
            raise ResultFileError(str(exc)) from None

    def result_key(self, record: ResultDoc) -> tuple[str, str, int]:
        return record.model, record.course, 0

    def default_setup(self, records: list[ResultDoc]) -> NightSetup:
        return NightSetup(tuple(sorted({d.course for d in records})), 0, None)

    def table(self, records: list[ResultDoc], setup: NightSetup, void: list[dict[str, Any]],
              problems: list[str]) -> GameTable:
        courses = setup.items
        docs = keep(records, setup, "course",
                    lambda d: (d.model, d.course, f"golf/{d.model}.{d.course}"), problems)
        combined = combined_board(docs, courses)
        keys = {r.model: (round6(r.score),) for r in combined if r.rank is not None}
        return GameTable(
            {
                "courses": list(courses),
                "per_course": {c: [_row(r) for r in course_board(docs, c)] for c in courses},
                "combined": [_row(r) for r in combined],
                "void": void,
            },
            keys,
        )

    def render(self, game: dict[str, Any]) -> list[str]:
        out: list[str] = []
        for course in game["courses"]:
            rows = [
                [
                    str(r["rank"]),
                    clip(r["entrant"], NAME_WIDTH),
                    f"{r['score']:.2f}",
                    str(r["raw_bytes"]),
                    f"{r['penalty']:.2f}",
                    f"{_pct(r['tests_passed'], r['tests_total'])} "
                    f"({r['tests_passed']}/{r['tests_total']})",
                    f"{r['holes_passed']}/{r['holes_total']}",
                    str(r.get("fallbacks", 0)),
                ]
                for r in game["per_course"][course]
            ]
            out += ["", f"Golf: {course} (score = bytes + penalty x (1 - correctness)^2)"]
            out += grid(["Rank", "Entrant", "Score", "Raw Bytes", "Penalty", "Correctness",
                         "Holes Passed", "Fallbacks"], rows, left=2)
        if len(game["courses"]) > 1:
            out += ["", f"Golf combined ({', '.join(game['courses'])}): total score"]
            rows = [
                [
                    str(r["rank"]) if r["rank"] is not None else "-",
                    clip(r["entrant"], NAME_WIDTH),
                    f"{r['score']:.2f}",
                    *[f"{r['courses'][c]:.2f}" if c in r["courses"] else "-"
                      for c in game["courses"]],
                    ", ".join(r.get("missing") or []) or "",
                ]
                for r in game["combined"]
            ]
            out += grid(["#", "entrant", "total", *game["courses"], "missing"], rows, left=2)
        return out + void_lines(game["void"])


GAME = GolfNight()
