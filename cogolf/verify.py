"""Re-proving a replay: the whole file re-derived from its inputs, record for record.

The inputs of a match are its header (match id, seed and config, the deck it was
played on, the sandbox it ran in) and each seat's recorded submission per hole.
Everything else is a claim: the header's derived fields (names, aliases, draw),
each hole_start, each legality verdict and shot outcome (re-resolved through
the sandbox), par counts, hole scores, the episode_end and the result. This
module rebuilds the file the writer would have written from those inputs and
requires the replay to be exactly that, line for line and byte for byte in the
writer's canonical encoding, the wall-clock fields aside (`WALL_CLOCK`: any
finite, non-negative number is accepted there). So a deleted, duplicated,
swapped, renumbered or extra record, an extra or missing key, a changed value
or a changed type all fail, naming the first line that differs.

Inputs are checked too: a submission must be what intake would have accepted
(caps applied, strings clean), a fallback must be the fallback play, the
config must be one the server accepts, and the header's sandbox description
must have the writer's shape with `weak` consistent with its walls.

`verify_file` is the one entry point for every caller (CLI, league, server):
it returns a `VerifyReport` or raises `VerifyError`, whose message is one line,
`FILE:LINE: problem`.
"""

from __future__ import annotations

import math
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from cogolf import GAME_VERSION, PROTOCOL
from cogolf import messages as m
from cogolf.deadlines import MAX_DEADLINE, MAX_MATCH_DEADLINE, MIN_DEADLINE, deadline_problem
from cogolf.deck import Deck
from cogolf.engine import rules
from cogolf.engine.hole import HoleOutcome
from cogolf.engine.intake import Accepted, AcceptedTest
from cogolf.engine.match import Match, MatchConfig, ResolvedHole, SeatPlay, build_resolved
from cogolf.replay import Replay, ReplayError, read_replay
from cogolf.runtime.driver import fallback_play
from cogolf.runtime.resolve import HarnessFault, resolve_hole
from cogolf.sandbox.api import Limits, Sandbox
from cogolf.text import clean, clip

WALL_CLOCK = m.WALL_CLOCK_FIELDS
"""Fields whose value is not re-derived: `at` (hole_start, submission), `started_at`
(header), `wall_clock_seconds` (result)."""

FREE_INPUTS: dict[str, frozenset[str]] = {
    "header": frozenset({"match_id", "sandbox", "config"}),
    "submission": frozenset(
        {"attempts", "errors", "wrong_hole", "dropped_tests", "fallback_cause", "fallback_detail"}
    ),
    "episode_end": frozenset({"detail"}),
}
"""Recorded inputs nothing else re-derives, so any value of the right shape verifies:
the match id (its pattern is checked, the result must repeat it), the config's
deadlines (within the server's bounds; its seed, holes and names must be the
header's and the result's), the sandbox description (shape and `weak` checked),
a submission's intake history, the cause and words of a seat's own fallback (one of
`SEAT_FALLBACK_CAUSES`; words only on a seat_fallback), and the detail of a harness
fault. A match that did not end `complete` keeps its reason."""

OPTIONAL_IN_OLD_FILES: dict[str, frozenset[str]] = {
    "header": frozenset(),
    "submission": frozenset({"fallback_detail"}),
}
"""Fields added to a record after replays were first written: an old file may lack
them when their value is the default."""

MAX_NAME_CHARS = 64
EPISODE_DETAIL = {"complete": "", "deadline": "the match wall budget ran out"}
SANDBOX_KEYS = {
    "mode": str,
    "python": str,
    "walls": dict,
    "weak": bool,
    "accept_weak": bool,
    "pre_forked": int,
}

Resolver = Callable[[str, tuple[Accepted, Accepted], int | None], Awaitable[HoleOutcome]]
"""Re-resolves one hole: spec key, both accepted plays, the match's hash seed."""


class VerifyError(Exception):
    """A replay that is not proved; `str()` is one line, `FILE:LINE: problem`.

    `malformed` is true when the file could not even be read as a journal (the
    CLI exits 2), false when it reads but differs from its re-derivation (exit 1).
    """

    def __init__(self, path: Path, line: int | None, problem: str, *, malformed: bool) -> None:
        where = f"{path}:{line}" if line is not None else str(path)
        super().__init__(f"{where}: {problem}")
        self.path, self.line, self.problem, self.malformed = path, line, problem, malformed


@dataclass(frozen=True)
class VerifyReport:
    """What a verified replay proves."""

    path: Path
    match_id: str
    names: tuple[str, str]
    holes_resolved: int
    holes: int
    reason: str
    scores: tuple[int, int]
    winner: int | None
    replay: Replay


def first_difference(recorded: Any, expected: Any, path: str = "") -> str | None:
    """Where two builtins documents first differ, as `path: recorded X, expected Y`.

    Types are exact: 1 and 1.0 differ, and so do true and 1.
    """
    here = path or "$"
    if type(recorded) is not type(expected):
        return f"{here}: recorded {_show(recorded)}, expected {_show(expected)}"
    if isinstance(recorded, dict):
        for key in expected:
            if key not in recorded:
                return f"{path}.{key}: missing"
        for key in recorded:
            if key not in expected:
                return f"{path}.{key}: not a field of this record"
        for key in expected:
            diff = first_difference(recorded[key], expected[key], f"{path}.{key}")
            if diff:
                return diff
        return None
    if isinstance(recorded, list):
        for i, (a, b) in enumerate(zip(recorded, expected, strict=False)):
            diff = first_difference(a, b, f"{path}[{i}]")
            if diff:
                return diff
        if len(recorded) != len(expected):
            return f"{here}: recorded {len(recorded)} items, expected {len(expected)}"
        return None
    if recorded != expected:
        return f"{here}: recorded {_show(recorded)}, expected {_show(expected)}"
    return None


def _show(v: Any) -> str:
    text = repr(v)
    return text if len(text) <= 80 else text[:77] + "..."


def _label(rec: Any) -> str:
    kind = str(type(rec).__struct_config__.tag)
    parts = [kind] if getattr(rec, "hole", None) is None else [f"hole {rec.hole}", kind]
    if isinstance(rec, m.TestVerdict):
        parts.append(f"slot {rec.slot} test {rec.idx}")
    elif isinstance(rec, m.SubmissionRecord | m.ParResult):
        parts.append(f"slot {rec.slot}")
    return " ".join(parts)


def _play(sub: m.SubmissionRecord) -> SeatPlay:
    accepted = Accepted(
        hole=sub.hole,
        impl=sub.impl,
        tests=tuple(AcceptedTest(t.name, t.args, t.expect, t.why) for t in sub.tests),
        note=sub.note,
        dropped_tests=sub.dropped_tests,
    )
    return SeatPlay(
        accepted,
        sub.source,
        sub.fallback_cause,
        sub.attempts,
        tuple(sub.errors),
        sub.wrong_hole,
        sub.fallback_detail,
    )


class _Checker:
    """Walks the replay's lines against the expected records, first difference raises."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay
        self.records: list[Any] = [replay.header, *replay.events]
        if replay.result is not None:
            self.records.append(replay.result)
        self.pos = 0  # index into records (line number - 1)

    def fail(self, problem: str, line: int | None = None) -> VerifyError:
        n = self.pos + 1 if line is None else line
        return VerifyError(self.replay.path, n, problem, malformed=False)

    def peek(self) -> Any:
        return self.records[self.pos] if self.pos < len(self.records) else None

    def expect(self, expected: m.ReplayRecord) -> None:
        """The next line must be `expected` (its wall-clock fields taken from the file)."""
        recorded = self.peek()
        if recorded is None:
            raise self.fail(
                f"missing {_label(expected)}: the replay ends here (the match did not finish)"
            )
        line = self.replay.lines[self.pos]
        doc = msgspec.json.decode(line)  # depth was checked when the file was read
        want = msgspec.json.decode(msgspec.json.encode(expected))
        for key in WALL_CLOCK & want.keys():
            value = doc.get(key)
            if type(value) not in (int, float) or not math.isfinite(value) or value < 0:
                raise self.fail(f"{_label(recorded)}: {key} must be a non-negative number")
            want[key] = value
        kind = str(type(expected).__struct_config__.tag)
        for f in msgspec.structs.fields(type(expected)):
            later = f.encode_name in OPTIONAL_IN_OLD_FILES.get(kind, ())
            if later and f.encode_name not in doc and getattr(expected, f.name) == f.default:
                del want[f.encode_name]
        if type(recorded) is not type(expected):
            raise self.fail(f"{_label(recorded)} where {_label(expected)} belongs")
        diff = first_difference(doc, want)
        if diff:
            raise self.fail(f"{_label(recorded)}: {diff}")
        if msgspec.json.encode(want) != line:
            raise self.fail(
                f"{_label(recorded)}: not in the writer's canonical form "
                "(key order, spacing or number spelling differ)"
            )
        self.pos += 1


def _check_config(h: m.ReplayHeader, deck: Deck) -> MatchConfig:
    try:
        config = msgspec.convert(h.config, MatchConfig)
    except msgspec.ValidationError as exc:
        raise ValueError(f"config: {exc}") from None
    if not 0 <= config.seed < 2**63:
        raise ValueError(f"config: seed {config.seed} is outside 0..2**63-1")
    if not 1 <= config.holes <= len(deck.spec_keys()):
        raise ValueError(f"config: holes {config.holes} is outside 1..{len(deck.spec_keys())}")
    for name, most in (
        ("hole_deadline_seconds", MAX_DEADLINE),
        ("retry_deadline_seconds", MAX_DEADLINE),
        ("match_deadline_seconds", MAX_MATCH_DEADLINE),
    ):
        value = getattr(config, name)
        if deadline_problem(value, most) is not None:
            raise ValueError(f"config: {name} {value} is outside {MIN_DEADLINE}..{most}")
    if not all(n.strip() for n in config.names):
        raise ValueError("config: names must not be empty")
    if config.hash_seed is not None and not 0 <= config.hash_seed < 2**32:
        raise ValueError(f"config: hash_seed {config.hash_seed} is outside 0..2**32-1")
    return config


def _recorded_config(config: MatchConfig) -> dict[str, Any]:
    """The header's config as the writer records it; files from before hash seeds
    were fixed per match have no `hash_seed` (None: the sandbox's own)."""
    doc = msgspec.to_builtins(config)
    if config.hash_seed is None:
        doc.pop("hash_seed", None)
    return doc


def _check_sandbox(sandbox: dict[str, Any], known: frozenset[str]) -> str:
    """The description's shape: the first writer's keys, plus any key today's sandbox
    describes (its values are the recording's; only their kind is checked)."""
    missing, unknown = set(SANDBOX_KEYS) - set(sandbox), set(sandbox) - set(SANDBOX_KEYS) - known
    if missing or unknown:
        return f"sandbox: keys missing {sorted(missing)}, unknown {sorted(unknown)}"
    for key in set(sandbox) - set(SANDBOX_KEYS):
        if type(sandbox[key]) not in (str, bool, int, dict, list, type(None)):
            return f"sandbox.{key}: not a plain value"
    for key, kind in SANDBOX_KEYS.items():
        if type(sandbox[key]) is not kind:
            return f"sandbox.{key}: not a {kind.__name__}"
    walls = sandbox["walls"]
    if not all(type(v) is str for v in walls.values()):
        return "sandbox.walls: every wall is described by a string"
    weak = any(v.startswith("missing") for v in walls.values())
    if sandbox["weak"] is not weak:
        return f"sandbox.weak: recorded {sandbox['weak']}, the walls say {weak}"
    if weak and not sandbox["accept_weak"]:
        return "sandbox: a weak sandbox runs only with accept_weak"
    return ""


def _check_submission(sub: m.SubmissionRecord, deck: Deck, key: str) -> str:
    """Why this recorded submission is not one the match could have recorded, or ''."""
    if not 0 <= sub.attempts <= 2 or not 0 <= sub.wrong_hole < 2**31:
        return "attempts or wrong_hole out of range"
    if not 0 <= sub.dropped_tests < 2**31:
        return "dropped_tests out of range"
    if sub.source != "seat_fallback" and sub.fallback_detail:
        return "fallback words on a submission the seat did not mark as its own fallback"
    if sub.source == "fallback":
        if not sub.fallback_cause:
            return "a fallback without its cause"
        try:
            play = fallback_play(deck, key, sub.hole)
        except HarnessFault as exc:
            return f"no fallback play to compare with: {exc}"
    else:
        if sub.attempts == 0:
            return "a seat's submission with no attempt"
        if sub.source == "seat" and sub.fallback_cause is not None:
            return "a seat's own play with a fallback cause"
        if sub.source == "seat_fallback" and sub.fallback_cause not in m.SEAT_FALLBACK_CAUSES:
            return f"a seat's own fallback with an unknown cause {_show(sub.fallback_cause)}"
        problem = _intake_problem(sub)
        if problem:
            return f"intake never keeps this: {problem}"
        return ""
    mine = _play(sub).accepted
    if (mine.impl, mine.tests, mine.note) != (play.impl, play.tests, play.note):
        return "impl, tests or note differ from the fallback play"
    return ""


def _intake_problem(sub: m.SubmissionRecord) -> str:
    """What `engine.intake.accept` would have cut or refused in this submission, or ''."""
    if clean(sub.impl) != sub.impl or len(sub.impl) > rules.MAX_IMPL_CHARS:
        return "impl over the cap or not clean text"
    if len(sub.tests) > rules.MAX_TESTS:
        return f"{len(sub.tests)} tests (at most {rules.MAX_TESTS} are kept)"
    for i, t in enumerate(sub.tests):
        if (
            clip(t.name, rules.MAX_NAME_CHARS) != t.name
            or clip(t.why, rules.MAX_WHY_CHARS) != t.why
        ):
            return f"tests[{i}]: name or why over the cap or not clean text"
    if clip(sub.note, rules.MAX_NOTE_CHARS) != sub.note:
        return "note over the cap or not clean text"
    if clip(sub.fallback_detail, rules.MAX_FALLBACK_DETAIL_CHARS) != sub.fallback_detail:
        return "fallback_detail over the cap or not clean text"
    return ""


async def verify_replay_file(
    path: Path, deck: Deck, resolve: Resolver, sandbox_keys: frozenset[str] = frozenset()
) -> VerifyReport:
    """`verify_file` with the hole resolution supplied by the caller; `sandbox_keys` are
    the keys the verifying sandbox describes (a header may hold those besides the first
    writer's)."""
    path = Path(path)
    try:
        replay = read_replay(path)
    except ReplayError as exc:
        raise VerifyError(path, exc.line, exc.problem, malformed=True) from None
    if replay.torn_tail:
        raise VerifyError(path, len(replay.lines) + 1, "the last line is cut off", malformed=True)
    c = _Checker(replay)
    h = replay.header
    if h.format != "cogolf-replay" or h.format_version != 1:
        raise c.fail(
            f"header: format {h.format!r} version {h.format_version} is not cogolf-replay 1"
        )
    if (h.game_version, h.protocol) != (GAME_VERSION, PROTOCOL):
        raise c.fail(
            f"header: game {h.game_version} {h.protocol}; "
            f"this verifier is {GAME_VERSION} {PROTOCOL}"
        )
    if (h.deck_name, h.deck_version, h.deck_digest) != (deck.name, deck.version, deck.digest):
        raise c.fail(
            f"header: deck {h.deck_name} {h.deck_version} {h.deck_digest} is not the loaded "
            f"deck {deck.name} {deck.version} {deck.digest}"
        )
    try:
        config = _check_config(h, deck)
    except ValueError as exc:
        raise c.fail(f"header: {exc}") from None
    problem = _check_sandbox(h.sandbox, sandbox_keys)
    if problem:
        raise c.fail(f"header: {problem}")
    keys = deck.draw(config.seed, config.holes)
    c.expect(
        m.ReplayHeader(
            game_version=GAME_VERSION,
            protocol=PROTOCOL,
            match_id=h.match_id,
            deck_name=deck.name,
            deck_version=deck.version,
            deck_digest=deck.digest,
            seed=config.seed,
            names=[clip(n, MAX_NAME_CHARS) for n in config.names],
            aliases=list(rules.ALIASES),
            holes=keys,
            config=_recorded_config(config),
            sandbox=h.sandbox,
            started_at=0.0,
        )
    )
    match = Match(h.match_id, config, list(keys), {k: deck.spec(k) for k in keys})
    open_hole = False
    for hole, key in enumerate(keys, start=1):
        if isinstance(c.peek(), m.EpisodeEnd):
            break
        c.expect(m.HoleStart(hole=hole, spec_key=key, at=0.0))
        nxt = c.records[c.pos : c.pos + 2]
        if not (
            len(nxt) == 2 and all(isinstance(s, m.SubmissionRecord) and s.hole == hole for s in nxt)
        ):
            if c.peek() is None or isinstance(c.peek(), m.EpisodeEnd):
                open_hole = True  # the match ended while this hole was being played
                break
            raise c.fail("two submissions must follow hole_start")
        for i, sub in enumerate(nxt):
            problem = _check_submission(sub, deck, key)
            if problem:
                raise c.fail(f"{_label(sub)}: {problem}", c.pos + 1 + i)
        plays = (_play(nxt[0]), _play(nxt[1]))
        try:
            outcome = await resolve(
                key, (plays[0].accepted, plays[1].accepted), config.hash_seed
            )
        except HarnessFault as exc:
            raise VerifyError(
                path, c.pos + 1, f"hole {hole}: cannot re-resolve: {exc}", malformed=False
            ) from None
        rebuilt = build_resolved(
            hole, key, plays, outcome, match.scores, deck.hidden[key].ambiguity, 0.0
        )
        for rec in rebuilt.records():
            c.expect(rec)
        match.add(
            ResolvedHole(hole, key, (nxt[0], nxt[1]), rebuilt.verdicts, rebuilt.par, rebuilt.score)
        )
    end = c.peek()
    if end is None:
        raise c.fail("the replay ends without episode_end and result (the match did not finish)")
    if not isinstance(end, m.EpisodeEnd):
        raise c.fail(f"{_label(end)} where episode_end belongs")
    done = len(match.resolved)
    reason = "complete" if done == len(keys) else end.reason
    if reason == "complete" and (done != len(keys) or open_hole):
        raise c.fail("episode_end: a match ends complete only when every hole resolved")
    detail = EPISODE_DETAIL.get(reason, end.detail)
    c.expect(m.EpisodeEnd(reason=reason, holes_played=done, detail=detail))  # type: ignore[arg-type]
    result = match.result(reason, 0.0, deck.version, deck.digest)
    if c.peek() is None:
        raise c.fail("the replay ends without its result line (the match did not finish)")
    c.expect(result)
    assert c.pos == len(c.records)  # the reader allows nothing after the result
    return VerifyReport(
        path=path,
        match_id=h.match_id,
        names=config.names,
        holes_resolved=done,
        holes=len(keys),
        reason=reason,
        scores=(result.scores[0], result.scores[1]),
        winner=result.winner,
        replay=replay,
    )


def sandbox_resolver(deck: Deck, sandbox: Sandbox) -> Resolver:
    """Re-resolve holes through `sandbox`, with the limits every match uses."""

    async def resolve(
        key: str, subs: tuple[Accepted, Accepted], hash_seed: int | None
    ) -> HoleOutcome:
        return await resolve_hole(
            sandbox, deck.spec(key), deck.hidden[key], list(subs), Limits(), hash_seed
        )

    return resolve


async def verify_file(path: Path, deck: Deck, sandbox: Sandbox) -> VerifyReport:
    """Prove a finished replay against `deck` through a started `sandbox`.

    Returns what it proves; raises VerifyError (one line: `FILE:LINE: problem`) on
    the first line that is not what the inputs re-derive, or when the file cannot
    be read as a journal (`malformed`). Never raises anything else for a bad file.
    """
    keys = frozenset(sandbox.describe())
    return await verify_replay_file(path, deck, sandbox_resolver(deck, sandbox), keys)


async def verify_replay(path: Path, deck: Deck, sandbox: Sandbox) -> list[str]:
    """Divergences between the replay and its re-derivation; empty when it verifies.

    The list form of `verify_file`, kept for callers that collect problems.
    """
    try:
        await verify_file(path, deck, sandbox)
    except VerifyError as exc:
        return [str(exc)]
    return []
