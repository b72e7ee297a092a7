"""Turning what a seat sent into a submission the engine can play, or a precise rejection.

Every submission, whether it came over a websocket or from an in-process bot,
enters here as JSON text. Caps are applied in one place: an oversize message or
an over-long implementation rejects the attempt; extra tests are dropped and
counted; names, reasons and notes are cut on code-point boundaries. Strings are
sanitised so that every stored or relayed string is strict UTF-8.
"""

from __future__ import annotations

import json
import math
import re
from dataclasses import dataclass
from typing import Any, Literal, TypeVar

import msgspec

from cogolf.engine import rules
from cogolf.jsondepth import MAX_JSON_DEPTH, too_deep
from cogolf.messages import SeatFallback, Submission
from cogolf.text import clean

_SURROGATE = re.compile("[\ud800-\udfff]")


@dataclass(frozen=True)
class AcceptedTest:
    name: str
    args: Any
    expect: Any
    why: str


@dataclass(frozen=True)
class Accepted:
    hole: int
    impl: str
    tests: tuple[AcceptedTest, ...]
    note: str
    dropped_tests: int = 0
    truncated_fields: tuple[str, ...] = ()
    fallback_cause: str | None = None  # set when the seat marked this as its own fallback
    fallback_detail: str = ""


RejectCause = Literal["malformed", "oversize", "wrong_hole", "late", "host_error"]


@dataclass(frozen=True)
class Rejected:
    cause: RejectCause
    message: str
    hole: int | None = None  # the hole the message named, when it could be read


def _reject_constant(name: str) -> Any:
    raise ValueError(f"{name} is not valid JSON")


def _fix_surrogates(root: Any) -> Any:
    """Replace lone surrogates in every string of a decoded JSON document, without recursion."""
    if type(root) is str:
        return _SURROGATE.sub("\ufffd", root)
    stack = [root] if type(root) in (list, dict) else []
    while stack:
        node = stack.pop()
        if type(node) is list:
            for i, item in enumerate(node):
                if type(item) is str:
                    node[i] = _SURROGATE.sub("\ufffd", item)
                elif type(item) in (list, dict):
                    stack.append(item)
        else:
            items = list(node.items())
            node.clear()
            for key, item in items:
                if type(item) is str:
                    item = _SURROGATE.sub("\ufffd", item)
                elif type(item) in (list, dict):
                    stack.append(item)
                node[_SURROGATE.sub("\ufffd", key)] = item
    return root


def _finite_float(text: str) -> float:
    value = float(text)
    if not math.isfinite(value):  # e.g. 1e999: no journal could record it as sent
        raise ValueError(f"number {text[:40]} is out of range")
    return value


def decode_json(raw: str | bytes, *, repair_surrogates: bool = True) -> Any:
    """Strict JSON (no NaN/Infinity, no number that overflows to one, at most
    MAX_JSON_DEPTH levels deep); raises ValueError with a reason.

    Lone surrogates are replaced by U+FFFD unless `repair_surrogates` is false (a
    caller that must keep a string exactly as sent refuses such strings itself).
    """
    if isinstance(raw, bytes):
        try:
            raw = raw.decode("utf-8")
        except UnicodeDecodeError as exc:
            raise ValueError(f"message is not UTF-8 (byte {exc.start})") from None
    if too_deep(raw):
        raise ValueError(f"message nests deeper than {MAX_JSON_DEPTH} levels")
    try:
        doc = json.loads(raw, parse_constant=_reject_constant, parse_float=_finite_float)
    except RecursionError:
        raise ValueError("message nests too deeply") from None
    except json.JSONDecodeError as exc:
        raise ValueError(
            f"message is not JSON: {exc.msg} at line {exc.lineno} column {exc.colno}"
        ) from None
    except ValueError as exc:  # e.g. an integer with more digits than Python will parse
        raise ValueError(f"message is not usable JSON: {exc}") from None
    return _fix_surrogates(doc) if repair_surrogates else doc


M = TypeVar("M", bound=msgspec.Struct)


def decode_for_hole(
    raw: str | bytes, kind: type[M], expected_hole: int, *, repair_surrogates: bool = True
) -> M | Rejected:
    """One submission frame of any game, checked for size, JSON, shape and hole.

    `kind` is the message struct (with an int `hole` field); rejections carry
    msgspec's path-precise message or the cap that was exceeded.
    """
    size = message_size(raw)
    if size > rules.MAX_MESSAGE_BYTES:
        return Rejected(
            "oversize", f"message is {size} bytes; the cap is {rules.MAX_MESSAGE_BYTES} bytes"
        )
    try:
        doc = decode_json(raw, repair_surrogates=repair_surrogates)
    except ValueError as exc:
        return Rejected("malformed", str(exc))
    try:
        sub = msgspec.convert(doc, kind)
    except msgspec.ValidationError as exc:
        return Rejected("malformed", str(exc))
    except RecursionError:
        return Rejected("malformed", "message nests too deeply")
    hole = sub.hole  # type: ignore[attr-defined]
    if hole != expected_hole:
        return Rejected(
            "wrong_hole", f"submission is for hole {hole}; hole {expected_hole} is open", hole=hole
        )
    return sub


def message_size(raw: str | bytes) -> int:
    return len(raw) if isinstance(raw, bytes) else len(raw.encode("utf-8", "surrogatepass"))


def _clip(text: str, limit: int, field: str, truncated: list[str]) -> str:
    cleaned = clean(text)
    if len(cleaned) > limit:
        truncated.append(field)
        return cleaned[:limit]
    return cleaned


def accept(raw: str | bytes, expected_hole: int) -> Accepted | Rejected:
    """Validate one submission message for `expected_hole`."""
    sub = decode_for_hole(raw, Submission, expected_hole)
    if isinstance(sub, Rejected):
        return sub
    impl = clean(sub.impl)
    if len(impl) > rules.MAX_IMPL_CHARS:
        return Rejected(
            "malformed",
            f"impl is {len(impl)} characters; the cap is {rules.MAX_IMPL_CHARS} - at `$.impl`",
            hole=sub.hole,
        )
    truncated: list[str] = []
    kept = sub.tests[: rules.MAX_TESTS]
    tests = tuple(
        AcceptedTest(
            name=_clip(t.name, rules.MAX_NAME_CHARS, f"tests[{i}].name", truncated),
            args=t.args,
            expect=t.expect,
            why=_clip(t.why, rules.MAX_WHY_CHARS, f"tests[{i}].why", truncated),
        )
        for i, t in enumerate(kept)
    )
    note = _clip(sub.note, rules.MAX_NOTE_CHARS, "note", truncated)
    cause, detail = seat_fallback(sub.fallback, truncated)
    return Accepted(
        hole=sub.hole,
        impl=impl,
        tests=tests,
        note=note,
        dropped_tests=len(sub.tests) - len(kept),
        truncated_fields=tuple(truncated),
        fallback_cause=cause,
        fallback_detail=detail,
    )


def seat_fallback(mark: SeatFallback | None, truncated: list[str]) -> tuple[str | None, str]:
    """A submission's own fallback mark as (cause, detail), the detail cleaned and cut."""
    if mark is None:
        return None, ""
    detail = _clip(mark.detail, rules.MAX_FALLBACK_DETAIL_CHARS, "fallback.detail", truncated)
    return mark.cause, detail


def encode_play(obj: Any) -> str | Rejected:
    """JSON text of what an in-process bot returned, or why it cannot be sent."""
    if isinstance(obj, msgspec.Struct):
        obj = msgspec.to_builtins(obj)
    try:
        return json.dumps(obj, allow_nan=False, ensure_ascii=False)
    except (TypeError, ValueError, RecursionError) as exc:
        return Rejected("malformed", f"submission is not JSON: {exc}")
