"""A bot's own fallback, always marked: the stand-in play and the words that say why.

When a policy fails a hole the runtime still plays in time, but never as if the
policy had played: the stand-in goes out with the submission frame's `fallback`
mark (a cause from `messages.SEAT_FALLBACK_CAUSES` and a detail), so the match
records it as `source: "seat_fallback"` and counts it, like the server's own
fallback. The detail is what the bot author needs to fix the policy: the intake's
path-precise refusal, or an exception with the last frames of its traceback.
"""

from __future__ import annotations

import os
import traceback
from dataclasses import dataclass
from typing import Any

from cogolf.engine import rules

FRAMES_SHOWN = 3  # of a policy's traceback, innermost last


@dataclass(frozen=True)
class Why:
    """Why the policy's answer was not sent: a cause of `SEAT_FALLBACK_CAUSES` and words."""

    cause: str
    detail: str

    def mark(self) -> dict[str, str]:
        return {"cause": self.cause, "detail": self.detail[: rules.MAX_FALLBACK_DETAIL_CHARS]}


def where(exc: BaseException, *, skip: int = 1) -> str:
    """The last frames of `exc`'s traceback as `file.py:LINE in function`, innermost last;
    the first `skip` frames are the runtime's own (the call into the policy). Only a
    file's name is shown: its folder says nothing the author needs and may be private."""
    frames = traceback.extract_tb(exc.__traceback__)[skip:]
    shown = [f"{os.path.basename(f.filename)}:{f.lineno} in {f.name}" for f in frames]
    return " < ".join(reversed(shown[-FRAMES_SHOWN:]))


def raised(exc: BaseException, *, skip: int = 1) -> Why:
    """A policy that raised. An exception may name its own cause (an LLM player's
    `GiveUp` says `llm_no_reply` or `llm_broken`); any other is `policy_raised`."""
    cause = getattr(exc, "fallback_cause", None)
    if cause in ("llm_no_reply", "llm_broken"):
        return Why(cause, str(exc))
    text = f"{type(exc).__name__}: {exc}" if str(exc) else type(exc).__name__
    at = where(exc, skip=skip)
    return Why("policy_raised", f"{text} (at {at})" if at else text)


def invalid(message: str) -> Why:
    """A play the server's intake would refuse, with the intake's own message."""
    return Why("policy_invalid", f"the policy's play would be refused: {message}")


def too_slow(budget: float) -> Why:
    return Why(
        "policy_timeout",
        f"the policy did not answer within {max(0.0, budget):.1f} s "
        "(the bot's own deadline, kept short of the server's)",
    )


def marked(play: dict[str, Any], why: Why) -> dict[str, Any]:
    """`play` (a submission frame's fields) carrying the fallback mark."""
    return {**play, "fallback": why.mark()}
