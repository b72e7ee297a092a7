"""The bot SDK: one small interface for bot authors.

A policy turns an observation (the `observation` message as a plain dict) into a
submission dict `{"impl": ..., "tests": [...], "note": ...}`; `type` and `hole`
are filled in when missing. A policy is either a function or a class whose
instances have a `play(observation)` method (one instance per match, so it can
keep state between holes).
"""

from __future__ import annotations

from cogolf.bots.policy import Policy, PolicyError, load_policy

__all__ = ["Policy", "PolicyError", "load_policy"]
