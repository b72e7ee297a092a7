"""`--explain`: why each hole went the way it did, as text, from the match view model.

The same model as the pages, so the terminal and the browser tell one story:
each test's legality verdict and reason, each legal shot held or breached with
the expected value beside what came back, the par cases failed (as counts: the
cases stay hidden), fallbacks and their causes in words, and the ambiguity note
once it may be shown. Table headers are never cut; long values are.
"""

from __future__ import annotations

import textwrap
from collections.abc import Sequence

from cogolf.pages.cogolf_view import CogolfMatch, Hole, Play
from cogolf.pages.fields import one_line
from cogolf.pages.golf_view import GolfHole, GolfMatch
from cogolf.pages.view import MatchView

CELL = 40  # the widest a value cell may be; headers are never cut

COGOLF_COLUMNS = (
    "Columns: 'legality' is the verdict on a test (legal, or the first check it failed: "
    "ref_mismatch when its expectation disagrees with the reference, arity, ...); only a "
    "legal test is fired. 'shot' is what it did to the other seat's code: breached (caught "
    "it out) or held (the code returned the expected value). 'par' counts the hidden par "
    "cases a seat's code failed (counts only: the cases stay hidden)."
)
GOLF_COLUMNS = (
    "Columns: 'bytes' is the raw UTF-8 length of the source (never reformatted); 'score' is "
    "bytes plus the penalty for failed tests; 'public' and 'private' are tests passed of "
    "tests run (a private test shows only whether it passed); 'total' is the course score "
    "after the hole."
)


def _cut(text: str, width: int = CELL) -> str:
    # one line per row; spaces inside a value are kept (they may be what differs)
    text = one_line(text)
    return text if len(text) <= width else text[: width - 1] + "…"


def table(headers: Sequence[str], rows: Sequence[Sequence[str]], indent: str = "") -> list[str]:
    """Aligned columns, each as wide as its header or its widest cell; values are cut to
    CELL characters except in the last column, which nothing follows."""
    last = len(headers) - 1
    cells = [[_cut(c, 10**6 if i == last else CELL) for i, c in enumerate(row)] for row in rows]
    widths = [max([len(h), *(len(r[i]) for r in cells)]) for i, h in enumerate(headers)]

    def line(values: Sequence[str]) -> str:
        return (
            indent + "  ".join(v.ljust(w) for v, w in zip(values, widths, strict=True))
        ).rstrip()

    return [line(headers), *(line(r) for r in cells)]


def _signed(n: int) -> str:
    return f"{n:+d}"


def _causes(causes: dict[str, int]) -> str:
    return ", ".join(
        f"{n} {'time' if n == 1 else 'times'} {one_line(cause)}" for cause, n in causes.items()
    )


def _play(view: CogolfMatch, hole: Hole, play: Play) -> list[str]:
    me, other = one_line(view.aliases[play.slot]), one_line(view.aliases[1 - play.slot])
    out = []
    head = f"  {me}:"
    if hole.score is not None:
        head += f" hole {_signed(hole.score[play.slot])},"
    head += f" breaches {play.breaches}, held {play.held}, illegal tests {play.illegal}"
    if play.par_fails is not None:
        head += f", par cases failed {play.par_fails} of {play.par_total}"
    out.append(head)
    if play.own_fallback:
        why = f": {one_line(play.fallback_detail)}" if play.fallback_detail else ""
        out.append(
            f"    FALLBACK ({one_line(play.fallback_cause)}): not {me}'s play; its bot sent "
            f"the literalist's play in its place{why}"
        )
    elif play.fallback:
        cause = one_line(play.fallback_cause) or "no usable submission"
        out.append(f"    FALLBACK: {me}'s own play was not used; the fallback was played ({cause})")
    for i, err in enumerate(play.errors, start=1):
        out.append(f"    attempt {i} refused: {one_line(err)}")
    if play.dropped_tests:
        out.append(f"    {play.dropped_tests} tests dropped (over the limit)")
    if not play.shots:
        out.append(f"    no tests fired at {other}")
        return out
    out.append(f"    {me}'s tests at {other}'s code:")
    rows = []
    for s in play.shots:
        shot = {"breach": "breached", "held": "held"}.get(s.outcome, "not fired")
        rows.append(
            [str(s.idx), s.name, s.chip, shot, s.expect, s.observed if s.legal else "", s.why]
        )
    out += table(("#", "test", "legality", "shot", "expected", "returned", "why"), rows, "      ")
    return out


def explain_cogolf(view: CogolfMatch) -> str:
    """Every string from the journal is shown on one line (`one_line`): a bot's line
    break cannot start a line that looks like the explanation's own."""
    seat = [one_line(view.seat(0)), one_line(view.seat(1))]
    alias = [one_line(a) for a in view.aliases]
    lines = [
        f"Cogolf match {one_line(view.match_id)}: {seat[0]} v {seat[1]}, deck {one_line(view.deck)}"
    ]
    e = view.endcard
    if e is None:
        lines.append(
            f"  {view.status}: {view.resolved} of {view.holes_total} holes resolved, "
            f"score {_signed(view.scores[0])} : {_signed(view.scores[1])}"
        )
    else:
        verdict = "draw" if e.winner is None else f"{seat[e.winner]} wins"
        lines.append(
            f"  finished ({one_line(e.reason)}): {verdict}, "
            f"{_signed(e.scores[0])} : {_signed(e.scores[1])}"
        )
    lines += ["", *textwrap.wrap(COGOLF_COLUMNS, 100)]
    for hole in view.holes:
        lines.append("")
        title = f" ({one_line(hole.spec.title)})" if hole.spec.title else ""
        key = one_line(hole.spec.key)
        if hole.score is None:
            lines.append(f"Hole {hole.number}: {key}{title}: not resolved")
            continue
        lines.append(
            f"Hole {hole.number}: {key}{title}: {alias[0]} "
            f"{_signed(hole.score[0])}, {alias[1]} {_signed(hole.score[1])}"
        )
        for play in hole.plays:
            if play is not None:
                lines += _play(view, hole, play)
        if hole.ambiguity:
            lines.append(f"  ambiguity: {one_line(hole.ambiguity)}")
    if e is not None:
        lines.append("")
        k = e.killer
        if k is not None:
            lines.append(
                f"Killer test: hole {k.hole}, {alias[k.slot]}'s test {k.idx} "
                f"'{one_line(k.name)}', args {_cut(k.args)}, expect {_cut(k.expect)} "
                f"(swing {_signed(k.swing)})"
            )
            if k.why:
                lines.append(f"  why: {one_line(k.why)}")
        elif e.drawn_without_breach:
            lines.append("Killer test: NO BREACH — DRAWN MATCH")
        else:
            lines.append("Killer test: none (the winner made no breach; won on par)")
        for slot in (0, 1):
            if view.fallbacks[slot]:
                total = sum(view.fallbacks[slot].values())
                lines.append(
                    f"{alias[slot]} played the fallback on {total} "
                    f"{'hole' if total == 1 else 'holes'}: {_causes(view.fallbacks[slot])}"
                )
            if view.none_of_its_own(slot):
                lines.append(f"WARNING: {seat[slot]} played no hole of its own")
    return "\n".join(lines)


def _num(x: float | None) -> str:
    return "" if x is None else f"{x:g}"


def _golf_fallback(h: GolfHole) -> str:
    if not h.fallback:
        return ""
    by = "the bot's own, " if h.own_fallback else ""
    return f"FALLBACK ({by}{h.fallback_cause or 'no submission'})"


def explain_golf(view: GolfMatch) -> str:
    who = f", golfer {one_line(view.model)}" if view.model else ""
    lines = [f"Golf match {one_line(view.match_id)}: course {one_line(view.course)}{who}"]
    if view.ended:
        lines.append(f"  finished ({one_line(view.reason)}): {_num(view.total)} strokes")
    else:
        lines.append(
            f"  {view.status}: {view.resolved} of {view.holes_total} holes, "
            f"{_num(view.total)} so far"
        )
    lines += ["", *textwrap.wrap(GOLF_COLUMNS, 100), ""]
    rows = [
        [
            str(h.number),
            h.key,
            "" if h.bytes is None else str(h.bytes),
            f"{h.public_passed}/{h.public_total}" if h.public_total else "-",
            f"{h.private_passed}/{h.private_total}" if h.private_total else "-",
            _num(h.score),
            _num(h.total),
            h.status or "playing",
            _golf_fallback(h),
        ]
        for h in view.holes
    ]
    headers = ("hole", "key", "bytes", "public", "private", "score", "total", "status", "fallback")
    lines += table(headers, rows)
    for h in view.holes:
        failed = [t for t in h.tests if not t.passed]
        detail = f": {h.detail}" if h.detail else ""
        notes = [f"  {one_line(h.reason + detail)}"] if h.reason else []
        notes += [f"  attempt {i} refused: {one_line(e)}" for i, e in enumerate(h.errors, 1)]
        if h.own_fallback and h.fallback_detail:
            notes.append(f"  the bot passed this hole: {one_line(h.fallback_detail)}")
        if failed or notes:
            lines += ["", f"Hole {h.number}: {one_line(h.key)}", *notes]
            if failed:
                rows = [[t.name, t.status, t.got, t.detail] for t in failed]
                lines += table(("public test", "result", "returned", "detail"), rows, "  ")
    return "\n".join(lines)


def explain(view: MatchView) -> str:
    return explain_golf(view) if isinstance(view, GolfMatch) else explain_cogolf(view)
