"""The readable scorecard of a match, rendered from its replay alone.

The same text is printed at the end of `cogolf play` and by `cogolf replay FILE`,
so what a bot author reads after a live match is what anyone can recompute.
"""

from __future__ import annotations

from cogolf import messages as m
from cogolf.engine.match import resolved_from_records
from cogolf.replay import Replay
from cogolf.text import clean
from cogolf.values import short_text


def _fallback_mark(sub: m.SubmissionRecord) -> str:
    return f"FALLBACK({sub.fallback_cause})" if sub.source == "fallback" else ""


def render(replay: Replay) -> str:
    """The scorecard, with no control character (a crafted journal's strings were never
    cleaned by intake, and this goes to a terminal)."""
    return clean(_render(replay))


def _render(replay: Replay) -> str:
    h = replay.header
    res = replay.result
    a0, a1 = h.aliases
    n0, n1 = h.names
    lines = [
        f"Cogolf match {h.match_id}  seed {h.seed}  deck {h.deck_name} {h.deck_version}",
        f"  seat 0: {n0} ({a0})    seat 1: {n1} ({a1})",
        "",
        f"  {'':>4}  {'':<24} {'score':^9}  {'breaches':^8}  {'par fails':^9}  {'illegal':^7}",
        f"  {'hole':>4}  {'spec':<24} {a0[:4]:>4} {a1[:4]:>4}  {a0[:3]:>3} {a1[:4]:>4}  "
        f"{a0[:4]:>4} {a1[:4]:>4}  {a0[:3]:>3} {a1[:3]:>3}  fallbacks",
    ]
    for r in resolved_from_records(replay.events):
        s = r.score
        marks = ", ".join(
            f"{h.aliases[i]} {_fallback_mark(r.submissions[i])}"
            for i in (0, 1)
            if r.submissions[i].source == "fallback"
        )
        lines.append(
            f"  {r.hole:>4}  {r.spec_key[:24]:<24} {s.score[0]:>+4} {s.score[1]:>+4}  "
            f"{s.breaches[0]:>3} {s.breaches[1]:>4}  {s.par_fails[0]:>4} {s.par_fails[1]:>4}  "
            f"{s.illegal_tests[0]:>3} {s.illegal_tests[1]:>3}  {marks}"
        )
    lines.append("")
    if res is None:
        lines.append("  (no result line: the match did not finish)")
        return "\n".join(lines)
    lines.append(
        f"  total  {a0} {res.scores[0]:+d}   {a1} {res.scores[1]:+d}   "
        f"({res.holes_played} holes, ended: {res.reason})"
    )
    for i in (0, 1):
        lines.append(
            f"  {h.aliases[i]:<6} breaches {res.breaches[i]}, "
            f"breaches taken {res.breaches_taken[i]}, "
            f"par fails {res.par_fails[i]}, tests fired {res.tests_fired[i]}, "
            f"illegal {res.illegal_tests[i]}, fallbacks {res.fallbacks[i]}"
            + (f" {res.fallback_causes[i]}" if res.fallbacks[i] else "")
        )
    if res.winner is None:
        lines.append("  result: DRAW")
    else:
        lines.append(f"  result: {h.aliases[res.winner]} ({h.names[res.winner]}) wins")
    k = res.killer_test
    if k is None:
        lines.append(
            "  killer test: NO BREACH — DRAWN MATCH"
            if res.winner is None
            else "  killer test: none (the winner made no breach; won on par)"
        )
    else:
        lines.append(
            f"  killer test: hole {k.hole}, {h.aliases[k.slot]}'s test {k.idx} {k.name!r} "
            f"args {short_text(k.args, 60)} expect {short_text(k.expect, 40)} (swing {k.swing:+d})"
        )
        if k.why:
            lines.append(f"    why: {k.why}")
    return "\n".join(lines)
