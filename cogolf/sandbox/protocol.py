"""Parsing what a child writes, in a way no child can crash.

A child's result line is hostile input: it may be invalid UTF-8, nested a million
levels deep, carry a ten-megabyte integer (a child can lift its own digit limit),
or forge fields. Every failure here becomes a `ProtocolError` with a reason.
"""

from __future__ import annotations

import json
from typing import Any

from cogolf.values import NotAValue, Value, canonical


class ProtocolError(ValueError):
    """The child broke the result protocol; the batch ends."""


def _reject_constant(name: str) -> Any:
    raise ProtocolError(f"non-finite number {name}")


_DECODER = json.JSONDecoder(parse_constant=_reject_constant)


def parse_line(line: bytes) -> dict[str, Any]:
    try:
        text = line.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise ProtocolError("result line is not UTF-8") from exc
    try:
        msg = _DECODER.decode(text)
    except ProtocolError:
        raise
    except (ValueError, RecursionError, MemoryError) as exc:
        # ValueError covers malformed JSON and integers past the digit limit.
        raise ProtocolError(f"result line is not JSON ({type(exc).__name__})") from exc
    if type(msg) is not dict:
        raise ProtocolError("result line is not an object")
    kind = msg.get("k")
    if type(kind) is not str:
        raise ProtocolError("result line has no kind")
    return msg


def field_str(msg: dict[str, Any], name: str, limit: int = 200) -> str:
    value = msg.get(name, "")
    if type(value) is not str:
        raise ProtocolError(f"field {name} is not a string")
    return value[:limit]


def field_float(msg: dict[str, Any], name: str) -> float:
    value = msg.get(name, 0.0)
    if type(value) not in (int, float) or not 0 <= value < 1e6:
        return 0.0
    return float(value)


def field_value(msg: dict[str, Any]) -> Value:
    try:
        return canonical(msg.get("value"))
    except NotAValue as exc:
        raise ProtocolError(f"returned value outside the domain: {exc}") from exc
    except RecursionError as exc:
        raise ProtocolError("returned value nested too deeply") from exc


# ensure_ascii keeps lone surrogates in sources and strings intact across the pipe; one
# encoder for every request (json.dumps with options builds a new one per call).
_ENCODER = json.JSONEncoder(ensure_ascii=True, separators=(",", ":"), allow_nan=False)


def encode_request(obj: dict[str, Any]) -> bytes:
    return _ENCODER.encode(obj).encode() + b"\n"
