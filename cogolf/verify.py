"""Re-proving a replay: every hole re-resolved from its recorded submissions.

The recorded submissions are the inputs; everything else in a replay (legality
verdicts, shot outcomes, par counts, hole scores, the result) is a claim that
this module recomputes through the sandbox and compares, wall-clock fields
aside. The first divergence is reported with where it is.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from cogolf import messages as m
from cogolf.deck import Deck
from cogolf.engine.intake import Accepted, AcceptedTest
from cogolf.engine.match import Match, MatchConfig, SeatPlay, build_resolved, resolved_from_records
from cogolf.replay import ReplayError, read_replay, without_wall_clock
from cogolf.runtime.resolve import HarnessFault, resolve_hole
from cogolf.sandbox.api import Limits, Sandbox


def first_difference(recorded: Any, recomputed: Any, path: str = "") -> str | None:
    """Where two builtins documents first differ, as `path: recorded X, recomputed Y`."""
    if type(recorded) is not type(recomputed) and not (
        isinstance(recorded, int | float) and isinstance(recomputed, int | float)
    ):
        return f"{path or '$'}: recorded {recorded!r}, recomputed {recomputed!r}"
    if isinstance(recorded, dict):
        for key in sorted(set(recorded) | set(recomputed)):
            if key not in recorded or key not in recomputed:
                return f"{path}.{key}: present on one side only"
            diff = first_difference(recorded[key], recomputed[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(recorded, list):
        if len(recorded) != len(recomputed):
            return f"{path}: recorded {len(recorded)} items, recomputed {len(recomputed)}"
        for i, (a, b) in enumerate(zip(recorded, recomputed, strict=True)):
            diff = first_difference(a, b, f"{path}[{i}]")
            if diff:
                return diff
        return None
    if recorded != recomputed:
        return f"{path or '$'}: recorded {recorded!r}, recomputed {recomputed!r}"
    return None


def _play(sub: m.SubmissionRecord) -> SeatPlay:
    accepted = Accepted(
        hole=sub.hole,
        impl=sub.impl,
        tests=tuple(AcceptedTest(t.name, t.args, t.expect, t.why) for t in sub.tests),
        note=sub.note,
        dropped_tests=sub.dropped_tests,
    )
    return SeatPlay(
        accepted, sub.source, sub.fallback_cause, sub.attempts, tuple(sub.errors), sub.wrong_hole
    )


def _label(rec: m.ReplayEvent) -> str:
    kind = type(rec).__struct_config__.tag
    parts = [f"hole {getattr(rec, 'hole', '?')}", str(kind)]
    if isinstance(rec, m.TestVerdict):
        parts.append(f"slot {rec.slot} test {rec.idx}")
    elif isinstance(rec, m.SubmissionRecord | m.ParResult):
        parts.append(f"slot {rec.slot}")
    return " ".join(parts)


async def verify_replay(path: Path, deck: Deck, sandbox: Sandbox) -> list[str]:
    """Divergences between the replay and its re-resolution; empty when it verifies."""
    try:
        replay = read_replay(path)
    except ReplayError as exc:
        return [str(exc)]
    h = replay.header
    if h.deck_digest != deck.digest:
        return [f"header: deck digest {h.deck_digest} is not the loaded deck's {deck.digest}"]
    try:
        config = msgspec.convert(h.config, MatchConfig)
    except msgspec.ValidationError as exc:
        return [f"header: config: {exc}"]
    if deck.draw(config.seed, config.holes) != h.holes:
        return ["header: the holes are not the seeded draw of this deck"]
    match = Match(h.match_id, config, list(h.holes), {k: deck.spec(k) for k in h.holes})
    for r in resolved_from_records(replay.events):
        key = h.holes[r.hole - 1]
        if r.spec_key != key:
            return [f"hole {r.hole}: spec {r.spec_key!r}, the draw says {key!r}"]
        plays = (_play(r.submissions[0]), _play(r.submissions[1]))
        try:
            outcome = await resolve_hole(
                sandbox,
                deck.spec(key),
                deck.hidden[key],
                [p.accepted for p in plays],
                Limits(),
                config.hash_seed,
            )
        except HarnessFault as exc:
            return [f"hole {r.hole}: cannot re-resolve: {exc}"]
        rebuilt = build_resolved(
            r.hole, key, plays, outcome, match.scores, deck.hidden[key].ambiguity, 0.0
        )
        recorded, recomputed = r.records(), rebuilt.records()
        if len(recorded) != len(recomputed):
            return [
                f"hole {r.hole}: {len(recorded)} records, re-resolution gives {len(recomputed)}"
            ]
        for a, b in zip(recorded, recomputed, strict=True):
            diff = first_difference(without_wall_clock(a), without_wall_clock(b))
            if diff:
                return [f"{_label(a)}: {diff}"]
        match.add(r)
    if replay.result is not None:
        res = replay.result
        again = match.result(res.reason, 0.0, deck.version, deck.digest)
        diff = first_difference(without_wall_clock(res), without_wall_clock(again))
        if diff:
            return [f"result: {diff}"]
    return []
