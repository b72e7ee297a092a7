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
    """The server's fallback as FALLBACK(cause); the seat's own as FALLBACK(own: cause)."""
    own = "own: " if sub.source == "seat_fallback" else ""
    return f"FALLBACK({own}{sub.fallback_cause})" if sub.source in m.FALLBACK_SOURCES else ""


GROUPS = ("score", "breaches", "par fails", "illegal")
LEGEND = (
    "  score: the hole's points; breaches: tests that broke the opponent's code; par fails:",
    "  hidden par cases the seat's code failed; illegal: the seat's tests refused as illegal;",
    "  fallbacks: seats whose play was not their own, with the cause (own: the seat's bot",
    "  sent the literalist's play itself, saying why; otherwise the server played it)",
)


def _causes(causes: dict[str, int]) -> str:
    return ", ".join(f"{cause} {n}" for cause, n in sorted(causes.items()))


def render(replay: Replay) -> str:
    """The scorecard, with no control character (a crafted journal's strings were never
    cleaned by intake, and this goes to a terminal)."""
    return clean(_render(replay))


def _render(replay: Replay) -> str:
    h = replay.header
    res = replay.result
    a0, a1 = h.aliases
    n0, n1 = h.names
    w = max(4, len(a0), len(a1))  # an alias is never cut: the columns widen instead

    def pair(cells: tuple[object, object]) -> str:
        return f"{cells[0]!s:>{w}} {cells[1]!s:>{w}}"

    lines = [
        f"Cogolf match {h.match_id}  seed {h.seed}  deck {h.deck_name} {h.deck_version}",
        f"  seat 0: {n0} ({a0})    seat 1: {n1} ({a1})",
        "",
        (f"  {'':>4}  {'':<24} " + "  ".join(f"{g:^{2 * w + 1}}" for g in GROUPS)).rstrip(),
        f"  {'hole':>4}  {'spec':<24} " + "  ".join(pair((a0, a1)) for _ in GROUPS) + "  fallbacks",
    ]
    for r in resolved_from_records(replay.events):
        s = r.score
        marks = ", ".join(
            f"{h.aliases[i]} {_fallback_mark(r.submissions[i])}"
            for i in (0, 1)
            if r.submissions[i].source in m.FALLBACK_SOURCES
        )
        cells = (
            (f"{s.score[0]:+d}", f"{s.score[1]:+d}"),
            (s.breaches[0], s.breaches[1]),
            (s.par_fails[0], s.par_fails[1]),
            (s.illegal_tests[0], s.illegal_tests[1]),
        )
        lines.append(
            f"  {r.hole:>4}  {r.spec_key[:24]:<24} "
            + "  ".join(pair(c) for c in cells)
            + f"  {marks}".rstrip()
        )
    lines += [*LEGEND, ""]
    if res is None:
        lines.append("  (no result line: the match did not finish)")
        return "\n".join(lines)
    lines.append(
        f"  total  {a0} {res.scores[0]:+d}   {a1} {res.scores[1]:+d}   "
        f"({res.holes_played} hole{'' if res.holes_played == 1 else 's'}, ended: {res.reason})"
    )
    for i in (0, 1):
        lines.append(
            f"  {h.aliases[i]:<6} breaches {res.breaches[i]}, "
            f"breaches taken {res.breaches_taken[i]}, "
            f"par fails {res.par_fails[i]}, tests fired {res.tests_fired[i]}, "
            f"illegal {res.illegal_tests[i]}, fallbacks {res.fallbacks[i]}"
            + (f" ({_causes(res.fallback_causes[i])})" if res.fallbacks[i] else "")
        )
    for i in (0, 1):
        if res.holes_played and res.fallbacks[i] == res.holes_played:
            lines.append(
                f"  WARNING: {h.aliases[i]} ({h.names[i]}) played no hole of its own: "
                "every hole was a fallback"
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
