"""Every limit of the game, in one place, stated to bots at connect time.

A bot must never have to infer a cap from play: the `Rules` document below is sent
in `welcome` and in every observation, and the engine reads its caps from here.
"""

from __future__ import annotations

import msgspec

MAX_TESTS = 5
MAX_IMPL_CHARS = 4000
MAX_NAME_CHARS = 40
MAX_WHY_CHARS = 120
MAX_NOTE_CHARS = 200
MAX_FALLBACK_DETAIL_CHARS = 500  # a seat's words on why it sent its own fallback
MAX_ARGS_CHARS = 400
MAX_EXPECT_CHARS = 400
MAX_MESSAGE_BYTES = 16384
PAR_TESTS_PER_HOLE = 4
CPU_SECONDS_PER_CALL = 1.0
WALL_SECONDS_PER_BATCH = 6.0
HOLE_DEADLINE_SECONDS = 40.0
RETRY_DEADLINE_SECONDS = 15.0
HISTORY_HOLES = 4
# What one seat's connection may send (the server's intake is shared by both seats).
SEAT_FRAMES_PER_SECOND = 20.0
SEAT_FRAME_BURST = 40
SEAT_BYTES_PER_SECOND = 32768
SEAT_BYTE_BURST = 65536
SEAT_INBOUND_QUEUE = 4  # frames waiting for the intake; more are refused
SEAT_VIOLATIONS_BEFORE_CLOSE = 20  # refused frames before the connection is closed with 1008
SEAT_RECONNECT_COOLDOWN_SECONDS = 1.0  # after a 1008 close, the seat cannot reconnect for this long
DEFAULT_HOLES = 9
ALIASES = ("Ash", "Basil")

BLOCKED_CAPABILITIES = (
    "network",
    "filesystem writes",
    "reading files outside the interpreter",
    "process creation",
    "threads",
    "signals to other processes",
    "ctypes",
)

ALLOWED_IMPORTS = (
    "math",
    "re",
    "collections",
    "itertools",
    "functools",
    "heapq",
    "bisect",
    "string",
    "json",
)


class Rules(msgspec.Struct, frozen=True, kw_only=True):
    max_tests: int = MAX_TESTS
    max_impl_chars: int = MAX_IMPL_CHARS
    max_name_chars: int = MAX_NAME_CHARS
    max_why_chars: int = MAX_WHY_CHARS
    max_note_chars: int = MAX_NOTE_CHARS
    max_fallback_detail_chars: int = MAX_FALLBACK_DETAIL_CHARS
    max_args_chars: int = MAX_ARGS_CHARS
    max_expect_chars: int = MAX_EXPECT_CHARS
    max_message_bytes: int = MAX_MESSAGE_BYTES
    par_tests_per_hole: int = PAR_TESTS_PER_HOLE
    cpu_seconds_per_call: float = CPU_SECONDS_PER_CALL
    wall_seconds_per_batch: float = WALL_SECONDS_PER_BATCH
    history_holes: int = HISTORY_HOLES
    seat_frames_per_second: float = SEAT_FRAMES_PER_SECOND
    seat_frame_burst: int = SEAT_FRAME_BURST
    seat_bytes_per_second: int = SEAT_BYTES_PER_SECOND
    seat_byte_burst: int = SEAT_BYTE_BURST
    seat_inbound_queue: int = SEAT_INBOUND_QUEUE
    seat_violations_before_close: int = SEAT_VIOLATIONS_BEFORE_CLOSE
    seat_reconnect_cooldown_seconds: float = SEAT_RECONNECT_COOLDOWN_SECONDS
    blocked_capabilities: tuple[str, ...] = BLOCKED_CAPABILITIES
    allowed_imports: tuple[str, ...] = ALLOWED_IMPORTS
    scoring: str = (
        "hole_score[i] = (breaches[i] + par_fails[j]) - (breaches[j] + par_fails[i]); "
        "a test is legal only when the hidden reference returns its expect"
    )


RULES = Rules()
