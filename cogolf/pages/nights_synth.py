"""A synthetic league night, written as the real files `league run` leaves: for
`cogolf bench pages` and the page tests, where playing a 32-entrant night for real
would take too long.

Matches are real replay files (ReplayWriter, the journal's own types) with random
but rule-abiding hole scores; golf, Commit-0 and project results are files in each
game's result format; the standings are computed from the folder by the league's
own code by the caller, without re-proving (the files are ours).
"""

from __future__ import annotations

import json
import random
from collections.abc import Sequence
from pathlib import Path

import msgspec

from cogolf import GAME_VERSION, PROTOCOL
from cogolf import messages as m
from cogolf.engine import rules
from cogolf.replay import ReplayWriter

GOLF_HOLES = ("fizzbuzz", "primes", "reverse", "roman", "anagram", "leap")


def write_match(
    path: Path, match_id: str, names: tuple[str, str], seed: int, holes: int, rng: random.Random
) -> None:
    keys = [f"spec{i}" for i in range(1, holes + 1)]
    with ReplayWriter(path) as w:
        w.write(m.ReplayHeader(
            game_version=GAME_VERSION, protocol=PROTOCOL, match_id=match_id,
            deck_name="synthetic", deck_version="synthetic-1", deck_digest="sha256:synthetic",
            seed=seed, names=list(names), aliases=list(rules.ALIASES), holes=keys,
            config={"seed": seed, "holes": holes, "names": list(names)},
            sandbox={"mode": "synthetic"}, started_at=1.0,
        ))  # fmt: skip
        total, breaches, par_fails, scores = [0, 0], [0, 0], [0, 0], []
        for n, key in enumerate(keys, start=1):
            b = [rng.choice((0, 0, 1, 2)), rng.choice((0, 0, 1))]
            p = [rng.choice((0, 0, 0, 1)), rng.choice((0, 0, 0, 1))]
            w.write(m.HoleStart(hole=n, spec_key=key, at=1.0))
            for slot in (0, 1):
                w.write(m.SubmissionRecord(hole=n, slot=slot, source="seat", attempts=1, impl="",
                                           tests=[], note="", at=1.0))  # fmt: skip
            for slot in (0, 1):
                w.write(m.ParResult(hole=n, slot=slot, par_fails=p[slot], par_total=4))
            s0 = (b[0] + p[1]) - (b[1] + p[0])
            score = [s0, -s0]
            total = [total[0] + s0, total[1] - s0]
            breaches = [breaches[0] + b[0], breaches[1] + b[1]]
            par_fails = [par_fails[0] + p[0], par_fails[1] + p[1]]
            scores.append(score)
            w.write(m.HoleScore(hole=n, spec_key=key, score=score, cumulative=list(total),
                                breaches=b, par_fails=p, illegal_tests=[0, 0],
                                ambiguity="synthetic"))  # fmt: skip
        w.write(m.EpisodeEnd(reason="complete", holes_played=holes, detail=""))
        winner = None if total[0] == total[1] else (0 if total[0] > 0 else 1)
        w.write(m.MatchResult(
            match_id=match_id, names=list(names), aliases=list(rules.ALIASES), scores=total,
            hole_scores=scores, breaches=breaches, breaches_taken=[breaches[1], breaches[0]],
            par_fails=par_fails, tests_fired=[5 * holes, 5 * holes], illegal_tests=[0, 0],
            holes_played=holes, fallbacks=[0, 0], fallback_causes=[{}, {}], reason="complete",
            wall_clock_seconds=1.0, seed=seed, deck_version="synthetic-1",
            deck_digest="sha256:synthetic", winner=winner, killer_test=None,
        ))  # fmt: skip


def _golf_doc(entrant: str, course: str, night: str, rng: random.Random) -> dict[str, object]:
    holes = []
    for h in GOLF_HOLES:
        status = rng.choice(("passed", "passed", "passed", "failed", "missing"))
        size = rng.randint(20, 200) if status != "missing" else 0
        passed = 10 if status == "passed" else rng.randint(0, 9) if status == "failed" else 0
        holes.append(
            {
                "hole": h,
                "title": h.title(),
                "difficulty": "easy",
                "bytes": size,
                "tests_passed": passed,
                "tests_total": 10,
                "penalty": 0.0 if status == "passed" else 500.0,
                "score": size if status == "passed" else size + 500.0,
                "status": status,
            }
        )
    return {
        "format": "cogolf-golf-result/1", "model": entrant, "course": course, "run_id": night,
        "created": "2026-01-01T00:00:00+00:00", "holes_version": "synthetic",
        "totals": {"score": sum(h["score"] for h in holes),  # type: ignore[misc]
                   "holes_passed": sum(h["status"] == "passed" for h in holes),
                   "holes_total": len(holes),
                   "tests_passed": sum(h["tests_passed"] for h in holes),  # type: ignore[misc]
                   "tests_total": 10 * len(holes),
                   "raw_bytes": sum(h["bytes"] for h in holes),  # type: ignore[misc]
                   "penalty": 0.0, "official_bytes": 0},
        "holes": holes,
    }  # fmt: skip


def write_night(
    replays_root: Path,
    night: str,
    entrants: Sequence[str],
    *,
    holes: int = 9,
    seed: int = 1,
    solo: bool = True,
) -> Path:
    """Every pairing in both seat orders, plus (with `solo`) golf on one course, one
    Commit-0 task and one project task. Returns the night's folder, whose standings
    the caller computes with the league's own code (`league.publish`)."""
    rng = random.Random(seed)
    folder = replays_root / night
    folder.mkdir(parents=True, exist_ok=True)
    ids = []
    for i, a in enumerate(entrants):
        for j, b in enumerate(entrants):
            if i == j:
                continue
            mid = f"{night}-m{i:03d}-{j:03d}"  # entrant names may be anything; ids may not
            ids.append(mid)
            write_match(folder / f"{mid}.ndjson", mid, (a, b), seed + i * 1000 + j, holes, rng)
    games = ["golf", "commit0", "project"] if solo else []
    manifest = {
        "format": "cogolf-night", "name": night, "seed": seed, "anchor": entrants[0],
        "entrants": [{"name": e, "kind": "policy", "solo": games} for e in entrants],
        "matches": sorted(ids),
        **({"solo": {"golf_courses": ["python"], "commit0_tasks": ["textkit"],
                     "project_tasks": ["csv_importer"], "project_attempts": 5}} if solo else {}),
    }  # fmt: skip
    (folder / "night.json").write_bytes(msgspec.json.encode(manifest))
    if solo:
        for k, e in enumerate(entrants):
            g = folder / "golf"
            g.mkdir(exist_ok=True)
            # Names are anyone's text; file names keep only safe characters (as golf's do).
            safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in e)[:80]
            (g / f"{safe}.python.{night}.json").write_text(
                json.dumps(_golf_doc(e, "python", night, rng))
            )
            c0 = folder / "commit0"
            c0.mkdir(exist_ok=True)
            passed = rng.randint(0, 10)
            # Every second entrant is an agent: its attempts say what they spent.
            agent = ({"agent": {"status": "ok", "turns": 3, "input_tokens": 1200 + k,
                                "output_tokens": 340, "cost": 0.0125, "seconds": 42.0}}
                     if k % 2 else {})  # fmt: skip
            (c0 / f"{safe}.textkit.json").write_text(json.dumps({
                "game": "commit0", "schema": 1, "task": "textkit", "entrant": e, "status": "ok",
                "pass_rate": passed / 10, "passed": passed, "total": 10, **agent}))  # fmt: skip
            pr = folder / "project"
            pr.mkdir(exist_ok=True)
            for attempt in range(1, 6 if k % 5 else 4):  # every fifth entrant is incomplete
                (pr / f"{safe}.csv_importer.{attempt}.json").write_text(json.dumps({
                    "game": "project", "schema": 1, "task": "csv_importer", "entrant": e,
                    "attempt": attempt, "scale": "failure_weighted", "status": "ok",
                    "points": rng.choice((0.0, 0.5, 1.0)), **agent}))  # fmt: skip
    return folder
