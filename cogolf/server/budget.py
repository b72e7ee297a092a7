"""What one seat may send: a frame and byte budget checked before anything is decoded.

The intake (JSON decoding and validation) runs on the event loop both seats share,
so a seat that sends fast or heavy frames would otherwise spend its opponent's time.
Each seat has two token buckets (frames per second and bytes per second, with a
burst) and a cap on frames waiting for the intake. A frame over budget is dropped
without being decoded and counted as a violation; after a stated number of
violations the connection is closed with 1008. The limits are the `seat_*` fields of
`welcome.rules`. The buckets belong to the seat, not the connection, so reconnecting
does not refill them.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from cogolf.engine import rules


@dataclass
class TokenBucket:
    rate: float  # tokens per second
    burst: float  # the most tokens held
    clock: Callable[[], float] = time.monotonic
    tokens: float = -1.0
    stamp: float = 0.0

    def __post_init__(self) -> None:
        self.tokens = self.burst
        self.stamp = self.clock()

    def take(self, amount: float) -> bool:
        now = self.clock()
        self.tokens = min(self.burst, self.tokens + (now - self.stamp) * self.rate)
        self.stamp = now
        if self.tokens < amount:
            return False
        self.tokens -= amount
        return True


@dataclass
class SeatBudget:
    limits: rules.Rules = rules.RULES
    clock: Callable[[], float] = time.monotonic
    violations: int = 0  # refused frames on the current connection
    frames: TokenBucket = field(init=False)
    bytes: TokenBucket = field(init=False)

    def __post_init__(self) -> None:
        r = self.limits
        self.frames = TokenBucket(r.seat_frames_per_second, r.seat_frame_burst, self.clock)
        self.bytes = TokenBucket(r.seat_bytes_per_second, r.seat_byte_burst, self.clock)

    def new_connection(self) -> None:
        self.violations = 0

    def admit(self, size: int, waiting: int) -> str | None:
        """None when a frame of `size` bytes may go to the intake (with `waiting` frames
        of this seat already queued there); otherwise why it was refused."""
        r = self.limits
        if waiting >= r.seat_inbound_queue:
            why = f"{waiting} frames already wait for the intake (seat_inbound_queue)"
        elif not self.frames.take(1):
            why = f"over {r.seat_frames_per_second:g} frames/s (seat_frames_per_second)"
        elif not self.bytes.take(size):
            why = f"over {r.seat_bytes_per_second} bytes/s (seat_bytes_per_second)"
        else:
            return None
        self.violations += 1
        return why

    @property
    def exhausted(self) -> bool:
        return self.violations >= self.limits.seat_violations_before_close
