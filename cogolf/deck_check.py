"""`cogolf deck check`: proving a pack is playable by running it through the real engine.

Structural rules are enforced by the loader; this module runs code: the examples
and par cases must agree with the reference, the literalist's tests must all be
legal, each baseline must fail at least one par case, and the two baselines must
breach each other when played as a real hole through the sandbox.
"""

from __future__ import annotations

import asyncio
from dataclasses import dataclass

from cogolf import values
from cogolf.bots.policy import complete_play
from cogolf.bots.scripted import BASELINE_NAMES, baseline_play
from cogolf.deck import Deck
from cogolf.engine import rules
from cogolf.engine.intake import Accepted, accept, encode_play
from cogolf.runtime.resolve import resolve_hole
from cogolf.sandbox.api import CallStatus, Limits, LoadStatus, Sandbox


@dataclass(frozen=True)
class Problem:
    key: str
    message: str

    def __str__(self) -> str:
        return f"{self.key}: {self.message}"


def _accepted(deck: Deck, key: str, name: str) -> Accepted | str:
    text = encode_play(complete_play(baseline_play(deck.public, key, name), 1))
    if not isinstance(text, str):
        return text.message
    result = accept(text, 1)
    return result if isinstance(result, Accepted) else result.message


async def check_spec(deck: Deck, key: str, sandbox: Sandbox) -> list[Problem]:
    spec = deck.spec(key)
    hidden = deck.hidden[key]
    problems: list[Problem] = []
    fn = spec.signature.function
    cases = [("example", i, e) for i, e in enumerate(spec.examples)] + [
        ("par case", i, p) for i, p in enumerate(hidden.par)
    ]
    batch = await sandbox.run_batch(
        hidden.reference, [c[2].args for c in cases], function=fn, label="reference"
    )
    if batch.load is not LoadStatus.OK:
        return [Problem(key, f"reference does not load: {batch.load} {batch.load_detail}")]
    for (what, i, case), res in zip(cases, batch.results, strict=True):
        if res.status is not CallStatus.OK:
            problems.append(Problem(key, f"{what} {i}: reference {res.status} {res.detail}"))
        elif not values.values_equal(res.value, values.canonical(case.expect)):
            problems.append(
                Problem(
                    key,
                    f"{what} {i}: reference returns {values.short_text(res.value)}, "
                    f"deck says {values.short_text(case.expect)}",
                )
            )
    plays: dict[str, Accepted] = {}
    for name in BASELINE_NAMES:
        got = _accepted(deck, key, name)
        if isinstance(got, str):
            problems.append(Problem(key, f"{name} play is not acceptable: {got}"))
        else:
            plays[name] = got
    if len(plays) != 2:
        return problems
    lit, ped = plays["literalist"], plays["pedant"]
    outcome = await resolve_hole(sandbox, spec, hidden, [lit, ped], Limits())
    shots = {(s.author, s.idx): s for s in outcome.shots}
    for idx in range(len(lit.tests)):
        shot = shots[(0, idx)]
        if not shot.verdict.legal:
            problems.append(
                Problem(key, f"literalist test {idx} is illegal ({shot.verdict.reason})")
            )
    if outcome.illegal[1] == 0:
        problems.append(Problem(key, "pedant has no illegal test"))
    for slot, name in enumerate(BASELINE_NAMES):
        if outcome.par_fails[slot] == 0:
            problems.append(Problem(key, f"{name} fails no par case"))
        if outcome.breaches[slot] == 0:
            problems.append(Problem(key, f"{name}'s tests breach nothing of the other baseline"))
    for name, play in plays.items():
        if len(play.impl) > rules.MAX_IMPL_CHARS:
            problems.append(Problem(key, f"{name}.py exceeds {rules.MAX_IMPL_CHARS} characters"))
    return problems


async def check_deck(deck: Deck, sandbox: Sandbox) -> list[Problem]:
    results = await asyncio.gather(*(check_spec(deck, key, sandbox) for key in deck.spec_keys()))
    return [p for spec_problems in results for p in spec_problems]
