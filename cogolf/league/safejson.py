"""Reading a JSON result file that anyone could have written, without crashing.

A result file nested a hundred thousand deep makes recursive parsers and every
recursive walk after them raise RecursionError. The depth is measured first,
without recursion, and a file deeper than any real result is refused with its
reason; the caller turns that into a listed problem.
"""

from __future__ import annotations

import json
import re
from itertools import accumulate
from typing import Any

MAX_DEPTH = 64  # real result files nest a handful of levels
MAX_BYTES = 8 * 1024 * 1024

_STRINGS = re.compile(rb'"(?:[^"\\]|\\.)*"', re.DOTALL)
_NOT_BRACKETS = bytes(c for c in range(256) if c not in b"[]{}")


def nesting_depth(data: bytes) -> int:
    """How deep arrays and objects nest in `data` (strings skipped), iteratively."""
    brackets = _STRINGS.sub(b"", data).translate(None, _NOT_BRACKETS)
    if not brackets:
        return 0
    return max(accumulate(1 if c in b"[{" else -1 for c in brackets))


def loads(data: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` with size and depth caps; ValueError (with the reason) otherwise."""
    if len(data) > max_bytes:
        raise ValueError(f"larger than {max_bytes} bytes")
    depth = nesting_depth(data)
    if depth > max_depth:
        raise ValueError(f"nested {depth} deep, more than the {max_depth} a result may be")
    try:
        return json.loads(data)
    except RecursionError:  # unreachable after the depth check; kept as a backstop
        raise ValueError("nested too deep") from None


def check_bytes(data: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> None:
    """Only the caps of `loads`, for files another reader parses."""
    if len(data) > max_bytes:
        raise ValueError(f"larger than {max_bytes} bytes")
    depth = nesting_depth(data)
    if depth > max_depth:
        raise ValueError(f"nested {depth} deep, more than the {max_depth} a result may be")
