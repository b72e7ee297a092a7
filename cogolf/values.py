"""The value domain of Cogolf and its one equality rule.

Every comparison in the game (legality against the reference, shots against a
defender, par cases, duplicate tests, golf answers) goes through this module, so
that "equal" means exactly one thing everywhere.

A value is null, a bool, an int, a finite float, a str, a list, or an object with
string keys. Numbers compare by value (1 == 1.0, -0.0 == 0); a bool never equals
a number; object key order does not matter; strings compare by code points.
"""

from __future__ import annotations

import json
import math
from typing import Any

MAX_DEPTH = 64
"""Deepest nesting of lists/objects accepted as a value."""

MAX_INT_BITS = 4096
"""Largest integer magnitude accepted (about 1233 decimal digits)."""

Value = None | bool | int | float | str | list["Value"] | dict[str, "Value"]


class NotAValue(ValueError):
    """Raised when something is outside the value domain; `path` says where."""

    def __init__(self, path: str, reason: str) -> None:
        super().__init__(f"{reason} at {path}")
        self.path = path
        self.reason = reason


def canonical(obj: Any, *, path: str = "$") -> Value:
    """Return `obj` as a plain value (tuples become lists), or raise NotAValue.

    Checks exact types, so subclasses with surprising behaviour are rejected
    rather than trusted. Depth-capped, so deep input cannot exhaust the stack.
    """
    return _canonical(obj, path, 0)


def _canonical(obj: Any, path: str, depth: int) -> Value:
    if depth > MAX_DEPTH:
        raise NotAValue(path, f"nesting deeper than {MAX_DEPTH}")
    kind = type(obj)
    if obj is None or kind is bool or kind is str:
        return obj
    if kind is int:
        if obj.bit_length() > MAX_INT_BITS:
            raise NotAValue(path, f"integer larger than {MAX_INT_BITS} bits")
        return obj
    if kind is float:
        if not math.isfinite(obj):
            raise NotAValue(path, "non-finite float")
        return obj
    if kind is list or kind is tuple:
        return [_canonical(item, f"{path}[{i}]", depth + 1) for i, item in enumerate(obj)]
    if kind is dict:
        out: dict[str, Value] = {}
        for key, item in obj.items():
            if type(key) is not str:
                raise NotAValue(path, f"object key of type {type(key).__name__}")
            out[key] = _canonical(item, f"{path}.{key}", depth + 1)
        return out
    raise NotAValue(path, f"{kind.__name__} is not a value")


def is_value(obj: Any) -> bool:
    try:
        canonical(obj)
    except NotAValue:
        return False
    return True


def values_equal(a: Value, b: Value) -> bool:
    """The one equality rule. Both sides must already be canonical values."""
    ta, tb = type(a), type(b)
    if ta is bool or tb is bool:
        return ta is tb and a is b
    if ta in (int, float) and tb in (int, float):
        # Python compares int and float exactly (2**53 + 1 != 2.0**53).
        return a == b
    if ta is not tb:
        return False
    if ta is list:
        return len(a) == len(b) and all(values_equal(x, y) for x, y in zip(a, b, strict=True))
    if ta is dict:
        return a.keys() == b.keys() and all(values_equal(a[k], b[k]) for k in a)
    return a == b


def _normal(v: Value) -> Any:
    """Map a value to a form where equal values are identical JSON documents."""
    t = type(v)
    if t is float:
        return int(v) if v.is_integer() else v  # -0.0 and 1.0 become 0 and 1 exactly
    if t is list:
        return [_normal(x) for x in v]
    if t is dict:
        return {k: _normal(x) for k, x in v.items()}
    return v


def fingerprint(v: Value) -> str:
    """A string that two values share exactly when `values_equal` holds."""
    return json.dumps(_normal(v), sort_keys=True, ensure_ascii=True, separators=(",", ":"))


def compact_json(v: Value) -> str:
    """The compact JSON text of a value; its length is what the size caps measure."""
    return json.dumps(v, ensure_ascii=False, separators=(",", ":"), allow_nan=False)


def short_text(v: Value, limit: int = 120) -> str:
    """A bounded human-readable rendering, for verdicts and scorecards."""
    text = json.dumps(_normal(v), ensure_ascii=False, separators=(",", ":"))
    return text if len(text) <= limit else text[: limit - 1] + "…"
