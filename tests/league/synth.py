"""Synthetic league replays: real replay files with real records, written with ReplayWriter.

The standings read only headers, results and episode ends, so a synthetic match
carries those plus, per hole, the records every journal reader requires in order
(hole_start, two empty submissions, two par results, hole_score), with scores that
obey the game's rule: hole_score[i] = (breaches[i] + par_fails[j]) - (breaches[j] + par_fails[i]).
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from pathlib import Path

from cogolf import GAME_VERSION, PROTOCOL
from cogolf import messages as m
from cogolf.engine import rules
from cogolf.replay import ReplayWriter

HoleStats = tuple[int, int, int, int]  # breaches 0, breaches 1, par fails 0, par fails 1


@dataclass(frozen=True)
class SynthMatch:
    match_id: str
    names: tuple[str, str]
    holes: tuple[HoleStats, ...]
    ending: str = "complete"  # complete | deadline | harness_fault | torn (no result)
    fallback_causes: tuple[tuple[str, ...], tuple[str, ...]] = ((), ())


def hole_score(stats: HoleStats) -> list[int]:
    b0, b1, p0, p1 = stats
    s0 = (b0 + p1) - (b1 + p0)
    return [s0, -s0]


def write_match(path: Path, match: SynthMatch, *, seed: int = 1) -> Path:
    keys = [f"spec{i}" for i in range(1, len(match.holes) + 1)]
    with ReplayWriter(path) as w:
        w.write(
            m.ReplayHeader(
                game_version=GAME_VERSION,
                protocol=PROTOCOL,
                match_id=match.match_id,
                deck_name="synthetic",
                deck_version="synthetic-1",
                deck_digest="sha256:synthetic",
                seed=seed,
                names=list(match.names),
                aliases=list(rules.ALIASES),
                holes=keys,
                config={"seed": seed, "holes": len(keys), "names": list(match.names)},
                sandbox={"mode": "synthetic"},
                started_at=1.0,
            )
        )
        cumulative = [0, 0]
        breaches, par_fails, scores = [0, 0], [0, 0], []
        for n, (key, stats) in enumerate(zip(keys, match.holes, strict=True), start=1):
            w.write(m.HoleStart(hole=n, spec_key=key, at=1.0))
            for slot in (0, 1):
                w.write(
                    m.SubmissionRecord(
                        hole=n, slot=slot, source="seat", attempts=1, impl="", tests=[], note="",
                        at=1.0,
                    )
                )  # fmt: skip
            for slot in (0, 1):
                w.write(m.ParResult(hole=n, slot=slot, par_fails=stats[2 + slot], par_total=4))
            score = hole_score(stats)
            cumulative = [cumulative[0] + score[0], cumulative[1] + score[1]]
            breaches = [breaches[0] + stats[0], breaches[1] + stats[1]]
            par_fails = [par_fails[0] + stats[2], par_fails[1] + stats[3]]
            scores.append(score)
            w.write(
                m.HoleScore(
                    hole=n,
                    spec_key=key,
                    score=score,
                    cumulative=list(cumulative),
                    breaches=[stats[0], stats[1]],
                    par_fails=[stats[2], stats[3]],
                    illegal_tests=[0, 1],
                    ambiguity="synthetic",
                )
            )
        if match.ending == "torn":
            return path
        detail = "sandbox failed to start" if match.ending == "harness_fault" else ""
        w.write(m.EpisodeEnd(reason=match.ending, holes_played=len(keys), detail=detail))  # type: ignore[arg-type]
        winner = None if cumulative[0] == cumulative[1] else (0 if cumulative[0] > 0 else 1)
        causes = [dict.fromkeys(c, 0) for c in match.fallback_causes]
        for slot, c in enumerate(match.fallback_causes):
            for cause in c:
                causes[slot][cause] += 1
        w.write(
            m.MatchResult(
                match_id=match.match_id,
                names=list(match.names),
                aliases=list(rules.ALIASES),
                scores=list(cumulative),
                hole_scores=scores,
                breaches=breaches,
                breaches_taken=[breaches[1], breaches[0]],
                par_fails=par_fails,
                tests_fired=[5 * len(keys), 4 * len(keys)],
                illegal_tests=[0, len(keys)],
                holes_played=len(keys),
                fallbacks=[len(c) for c in match.fallback_causes],
                fallback_causes=[dict(sorted(c.items())) for c in causes],
                reason=match.ending,
                wall_clock_seconds=1.0,
                seed=seed,
                deck_version="synthetic-1",
                deck_digest="sha256:synthetic",
                winner=winner,
                killer_test=None,
            )
        )
    return path


def write_night(directory: Path, matches: Sequence[SynthMatch], file_names: Sequence[str]) -> None:
    directory.mkdir(parents=True, exist_ok=True)
    for match, name in zip(matches, file_names, strict=True):
        write_match(directory / name, match)
