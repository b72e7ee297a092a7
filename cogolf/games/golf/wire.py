"""Every message of a live golf match and every line of its replay, as msgspec structs.

A golf seat speaks the same frame kinds as a Cogolf seat (welcome, observation,
submission, ack, error, done; JSON text tagged on `type`) with golf bodies, so
one bot runtime and one server carry both games. Replay lines are tagged on
`kind`, like a Cogolf match's.
"""

from __future__ import annotations

from typing import Any, Literal

import msgspec

from cogolf.engine import rules
from cogolf.games.golf.results import ResultDoc
from cogolf.games.golf.scoring import HoleResult
from cogolf.messages import SeatFallback

PROTOCOL = "cogame.golf.v1"
REPLAY_FORMAT = "cogolf-golf-replay"
HOLE_COUNT = 18
RETRIES_PER_HOLE = 1
SOLO_ALIAS = "Ash"
DEFAULT_MODEL = "golf-bot"
DEFAULT_HOLE_DEADLINE_SECONDS = 120.0
DEFAULT_RETRY_DEADLINE_SECONDS = 30.0

# ---------------------------------------------------------------- seat -> server


class GolfSubmission(msgspec.Struct, tag="submission", tag_field="type", kw_only=True):
    hole: int
    source: str | None  # the file, byte for byte; null passes the hole (scored as missing)
    fallback: SeatFallback | None = None  # the seat's own fallback (a pass, usually), and why


# ---------------------------------------------------------------- server -> seat


class GolfRules(msgspec.Struct, frozen=True, kw_only=True):
    """Every cap a golf bot needs, stated at connect time."""

    language: str
    contract: str
    file_extension: str
    max_source_bytes: int
    max_message_bytes: int = rules.MAX_MESSAGE_BYTES
    per_test_seconds: float
    per_hole_seconds: float
    compile_seconds: float
    memory_bytes: int
    retries_per_hole: int = RETRIES_PER_HOLE
    default_penalty: float = 1000.0
    scoring: str = (
        "hole score = bytes + penalty x (1 - passed/tests)^2 over the public and private "
        "tests; no submission scores the full penalty; course score = sum of hole scores"
    )
    bytes: str = "the raw UTF-8 length of source; the file is never formatted or rewritten"
    passing: str = "a submission with source null passes the hole: scored as No submission"


class GolfWelcome(msgspec.Struct, tag="welcome", tag_field="type", kw_only=True):
    protocol: str = PROTOCOL
    game: Literal["golf"] = "golf"
    match_id: str
    slot: int
    alias: str = SOLO_ALIAS
    course: str
    holes: int
    hole_deadline_seconds: float
    retry_deadline_seconds: float
    rules: GolfRules
    resumed: bool = False


class PublicTest(msgspec.Struct, frozen=True):
    args: list[Any]
    expect: Any


class GolfTask(msgspec.Struct, frozen=True, kw_only=True):
    key: str
    title: str
    difficulty: str
    description: str
    signature: str  # in the course's language
    public_tests: list[PublicTest]
    penalty: float
    file_name: str


class GolfObservationBody(msgspec.Struct, frozen=True, kw_only=True):
    game: Literal["golf"] = "golf"
    course: str
    hole: int
    holes: int
    task: GolfTask
    contract: str
    score: float  # the course score so far
    rules: GolfRules


class GolfObservation(msgspec.Struct, tag="observation", tag_field="type"):
    hole: int
    deadline_seconds: float
    retry: bool
    observation: GolfObservationBody


# ---------------------------------------------------------------- replay records


class GolfConfig(msgspec.Struct, frozen=True, kw_only=True):
    course: str
    model: str
    hole_deadline_seconds: float = DEFAULT_HOLE_DEADLINE_SECONDS
    retry_deadline_seconds: float = DEFAULT_RETRY_DEADLINE_SECONDS
    per_test_seconds: float
    per_hole_seconds: float


class GolfReplayHeader(msgspec.Struct, tag="header", tag_field="kind", kw_only=True):
    format: str = REPLAY_FORMAT
    format_version: int = 1
    game: Literal["golf"] = "golf"
    match_id: str
    config: GolfConfig
    holes_version: str
    holes: list[str]  # hole keys in course order
    started_at: float


class GolfHoleStart(msgspec.Struct, tag="hole_start", tag_field="kind", kw_only=True):
    hole: int
    key: str
    at: float
    # What the seat was told of the hole (public), for the match page; absent in older files.
    title: str = ""
    description: str = ""
    signature: str = ""
    public_tests: list[PublicTest] = []


class GolfSubmissionRecord(msgspec.Struct, tag="submission", tag_field="kind", kw_only=True):
    hole: int
    key: str
    source: str | None  # None: the seat passed or the fallback (no submission) was played
    # seat_fallback: the seat sent its own fallback (marked, with the cause), see Cogolf's
    origin: Literal["seat", "fallback", "seat_fallback"]
    fallback_cause: str | None = None
    attempts_used: int = 0
    errors: list[str] = []
    wrong_hole: int = 0
    fallback_detail: str = ""


class GolfHoleScore(msgspec.Struct, tag="hole_score", tag_field="kind", kw_only=True):
    hole: int
    key: str
    result: HoleResult
    total: float  # the course score after this hole
    at: float


class GolfEpisodeEnd(msgspec.Struct, tag="episode_end", tag_field="kind", kw_only=True):
    reason: str  # complete | harness_fault
    holes_played: int
    detail: str = ""


class GolfMatchResult(msgspec.Struct, tag="result", tag_field="kind", kw_only=True):
    game: Literal["golf"] = "golf"
    match_id: str
    reason: str
    course: str
    model: str
    holes_played: int
    score: float
    document: ResultDoc | None  # the course result document; None when the match broke off
    result_file: str | None  # where the document was written, for `cogolf golf leaderboard`
    wall_clock_seconds: float


GolfEvent = GolfHoleStart | GolfSubmissionRecord | GolfHoleScore | GolfEpisodeEnd
GolfRecord = GolfReplayHeader | GolfEvent | GolfMatchResult


class GolfDone(msgspec.Struct, tag="done", tag_field="type"):
    result: GolfMatchResult


class GolfSnapshot(msgspec.Struct, tag="snapshot", tag_field="type", kw_only=True):
    match_id: str
    game: Literal["golf"] = "golf"
    status: str
    course: str
    hole: int
    holes: int
    score: float
    names: list[str]
    resolved: list[HoleResult]
