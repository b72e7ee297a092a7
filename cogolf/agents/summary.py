"""What the league's tables show of an agent's attempt, read back from a result file.

A result of an agent's attempt is the game's own document with an `agent` part; the
tables show its status, turns, tokens, cost and seconds, each checked (the file may
have been edited)."""

from __future__ import annotations

from typing import Any

AGENT_COUNTS = ("turns", "input_tokens", "output_tokens")


def agent_summary(raw: Any, source: str, error: type[Exception]) -> dict[str, Any] | None:
    """What the tables show of an agent's attempt (None for a submitted one), checked."""
    if raw is None:
        return None
    if not isinstance(raw, dict) or not isinstance(raw.get("status"), str) or \
            len(raw["status"]) > 64:
        raise error(f"{source}: agent must be an object with a status")
    out: dict[str, Any] = {"status": raw["status"]}
    for key in AGENT_COUNTS:
        value = raw.get(key, 0)
        if isinstance(value, bool) or not isinstance(value, int) or not 0 <= value < 1 << 53:
            raise error(f"{source}: agent.{key} must be a count")
        out[key] = value
    for key in ("cost", "seconds"):
        value = raw.get(key)
        if value is not None and (isinstance(value, bool) or not isinstance(value, int | float)
                                  or not 0 <= value < 1e12):
            raise error(f"{source}: agent.{key} must be a non-negative number")
        out[key] = value
    return out
