"""How a server hosts golf matches: where result documents go, which run limits apply.

A small value the server carries without knowing anything else about golf.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from cogolf.games.golf.runners.base import DEFAULT_LIMITS, RunLimits


@dataclass(frozen=True)
class GolfSettings:
    results_dir: Path | None = None  # None: <data>/results/golf beside the replays folder
    limits: RunLimits = DEFAULT_LIMITS
