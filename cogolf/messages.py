"""Every wire message and every replay record, as msgspec structs.

One module so that the protocol can be read in one place, and so that
`cogolf schema` can print the JSON Schema of everything a bot or a replay
reader will ever see. Records are tagged unions: wire messages on `type`,
replay lines on `kind`.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from cogolf.engine.rules import Rules

# ---------------------------------------------------------------- seat -> server


class TestCase(msgspec.Struct, kw_only=True):
    name: str = ""
    args: Any = msgspec.field(default_factory=list)
    expect: Any = None
    why: str = ""


# Why a seat's own runtime (`cogolf bot`, an in-process seat) sent a stand-in play instead
# of its policy's: the policy raised, returned a play the intake refuses, missed the
# runtime's deadline, or (an LLM seat) got no usable reply in time / was found broken.
SEAT_FALLBACK_CAUSES = (
    "policy_raised",
    "policy_invalid",
    "policy_timeout",
    "llm_no_reply",
    "llm_broken",
)
SeatFallbackCause = Literal[
    "policy_raised", "policy_invalid", "policy_timeout", "llm_no_reply", "llm_broken"
]


class SeatFallback(msgspec.Struct, kw_only=True):
    """Marks a submission as the seat's own fallback, with its cause: the match then
    records and counts it as a fallback (`source: "seat_fallback"`), not as the seat's
    play. Self-reported: a seat that sends a stand-in unmarked is not detected."""

    cause: SeatFallbackCause
    detail: str = ""  # what went wrong, in words (cut at Rules.max_fallback_detail_chars)


class Submission(msgspec.Struct, tag="submission", tag_field="type", kw_only=True):
    hole: int
    impl: str
    tests: list[TestCase] = msgspec.field(default_factory=list)
    note: str = ""
    fallback: SeatFallback | None = None


# ---------------------------------------------------------------- server -> seat


class Welcome(msgspec.Struct, tag="welcome", tag_field="type", kw_only=True):
    protocol: str
    match_id: str
    slot: int
    alias: str
    opponent_alias: str
    holes: int
    hole_deadline_seconds: float
    retry_deadline_seconds: float
    rules: Rules
    resumed: bool = False  # this is a reconnection to a match already under way


class Param(msgspec.Struct):
    name: str
    type: str


class Signature(msgspec.Struct):
    function: str
    params: list[Param]
    returns: str


class Example(msgspec.Struct):
    args: list[Any]
    expect: Any


class PublicSpecView(msgspec.Struct):
    key: str
    title: str
    prompt: str
    signature: Signature
    examples: list[Example]


class SeatView(msgspec.Struct):
    alias: str
    slot: int
    score: int


class OwnTestView(msgspec.Struct):
    name: str
    args: Any
    expect: Any
    legal: bool
    legal_reason: str
    outcome: str


class TheirTestView(msgspec.Struct):
    name: str
    args: Any
    expect: Any
    why: str
    outcome: str
    your_result: str


class HistoryEntry(msgspec.Struct):
    hole: int
    spec_key: str
    hole_score: int
    your_tests: list[OwnTestView]
    their_tests: list[TheirTestView]
    their_note: str
    your_par_fails: int
    their_par_fails: int
    your_fallback: bool = False


class ObservationBody(msgspec.Struct):
    hole: int
    holes: int
    spec: PublicSpecView
    you: SeatView
    opponent: SeatView
    history: list[HistoryEntry]
    rules: Rules


class Observation(msgspec.Struct, tag="observation", tag_field="type"):
    hole: int
    deadline_seconds: float
    retry: bool
    observation: ObservationBody


class Ack(msgspec.Struct, tag="ack", tag_field="type"):
    hole: int
    dropped_tests: int = 0
    truncated_fields: list[str] = msgspec.field(default_factory=list)


class Error(msgspec.Struct, tag="error", tag_field="type"):
    hole: int | None
    cause: str  # malformed | oversize | wrong_hole | late | over_budget (frame not read)
    message: str
    retry: bool = False  # whether another attempt will be offered


# ---------------------------------------------------------------- replay records


class ReplayStruct(msgspec.Struct, forbid_unknown_fields=True):
    """A journal record: reading one refuses any field the writer never writes."""


class ReplayHeader(ReplayStruct, tag="header", tag_field="kind", kw_only=True):
    format: str = "cogolf-replay"
    format_version: int = 1
    game_version: str
    protocol: str
    match_id: str
    deck_name: str
    deck_version: str
    deck_digest: str
    seed: int
    names: list[str]
    aliases: list[str]
    holes: list[str]  # the drawn spec keys, in play order
    config: dict[str, Any]
    sandbox: dict[str, Any]
    started_at: float  # wall-clock


class HoleStart(ReplayStruct, tag="hole_start", tag_field="kind", kw_only=True):
    hole: int
    spec_key: str
    at: float  # wall-clock


class RecordedTest(ReplayStruct, kw_only=True):
    name: str
    args: Any
    expect: Any
    why: str


class SubmissionRecord(ReplayStruct, tag="submission", tag_field="kind", kw_only=True):
    hole: int
    slot: int
    # seat: the seat's play; fallback: the server's (the seat gave none it could use);
    # seat_fallback: a stand-in the seat sent marked as its own fallback, with the cause.
    source: Literal["seat", "fallback", "seat_fallback"]
    fallback_cause: str | None = None
    attempts: int  # how many attempts the seat used (0..2)
    impl: str
    tests: list[RecordedTest]
    note: str
    dropped_tests: int = 0
    errors: list[str] = msgspec.field(default_factory=list)  # why earlier attempts failed
    wrong_hole: int = 0
    at: float
    fallback_detail: str = ""  # a seat_fallback's own words (absent from older files)


FALLBACK_SOURCES = frozenset({"fallback", "seat_fallback"})
"""Submission sources that are not the seat's own play: counted as fallbacks."""


class TestVerdict(ReplayStruct, tag="test_verdict", tag_field="kind", kw_only=True):
    hole: int
    slot: int  # the author
    target_slot: int
    idx: int
    name: str
    args: Any
    expect: Any
    why: str
    legal: bool
    legal_reason: str  # "ok" or the first failed gate
    outcome: Literal["held", "breach", "illegal"]
    observed: str  # what the defender returned, as short text ("" when illegal)


class ParResult(ReplayStruct, tag="par_result", tag_field="kind", kw_only=True):
    hole: int
    slot: int
    par_fails: int
    par_total: int


class HoleScore(ReplayStruct, tag="hole_score", tag_field="kind", kw_only=True):
    hole: int
    spec_key: str
    score: list[int]
    cumulative: list[int]
    breaches: list[int]
    par_fails: list[int]
    illegal_tests: list[int]
    # Always written to the journal; absent from what spectators see before the end.
    ambiguity: str = ""


class EpisodeEnd(ReplayStruct, tag="episode_end", tag_field="kind", kw_only=True):
    reason: Literal["complete", "deadline", "harness_fault"]
    holes_played: int
    detail: str = ""


class KillerTest(ReplayStruct, kw_only=True):
    hole: int
    slot: int
    idx: int
    name: str
    args: Any
    expect: Any
    why: str
    swing: int


class MatchResult(ReplayStruct, tag="result", tag_field="kind", kw_only=True):
    match_id: str
    names: list[str]
    aliases: list[str]
    scores: list[int]
    hole_scores: list[list[int]]
    breaches: list[int]
    breaches_taken: list[int]
    par_fails: list[int]
    tests_fired: list[int]
    illegal_tests: list[int]
    holes_played: int
    fallbacks: list[int]
    fallback_causes: list[dict[str, int]]
    reason: str
    wall_clock_seconds: float
    seed: int
    deck_version: str
    deck_digest: str
    winner: int | None
    killer_test: KillerTest | None


ReplayEvent = HoleStart | SubmissionRecord | TestVerdict | ParResult | HoleScore | EpisodeEnd
ReplayRecord = ReplayHeader | ReplayEvent | MatchResult

# Fields that legitimately differ between two runs of the same match.
WALL_CLOCK_FIELDS = frozenset({"at", "started_at", "wall_clock_seconds"})


# ---------------------------------------------------------------- results to seats and spectators


class Done(msgspec.Struct, tag="done", tag_field="type"):
    result: MatchResult


class WatchSnapshot(msgspec.Struct, tag="snapshot", tag_field="type", kw_only=True):
    match_id: str
    status: str
    hole: int
    holes: int
    scores: list[int]
    aliases: list[str]
    # Absent while the match is live for everyone but the admin (hidden information).
    names: list[str] = msgspec.field(default_factory=list)
    resolved: list[HoleScore]


class WatchEvent(msgspec.Struct, tag="event", tag_field="type"):
    event: ReplayRecord


class WatchDone(msgspec.Struct, tag="done", tag_field="type"):
    result: MatchResult | None


ServerToSeat = Welcome | Observation | Ack | Error | Done
ServerToWatcher = WatchSnapshot | WatchEvent | WatchDone
