"""Reading a JSON result file that anyone could have written, without crashing.

A result file nested a hundred thousand deep makes recursive parsers and every
recursive walk after them raise RecursionError. The depth is measured first,
without recursion, and a file deeper than any real result is refused with its
reason; the caller turns that into a listed problem.
"""

from __future__ import annotations

import json
from typing import Any

from cogolf.jsondepth import too_deep

MAX_DEPTH = 64  # real result files nest a handful of levels
MAX_BYTES = 8 * 1024 * 1024


def loads(data: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> Any:
    """`json.loads` with size and depth caps; ValueError (with the reason) otherwise."""
    check_bytes(data, max_bytes=max_bytes, max_depth=max_depth)
    try:
        return json.loads(data)
    except RecursionError:  # unreachable after the depth check; kept as a backstop
        raise ValueError("nested too deep") from None


def check_bytes(data: bytes, *, max_bytes: int = MAX_BYTES, max_depth: int = MAX_DEPTH) -> None:
    """Only the caps of `loads`, for files another reader parses."""
    if len(data) > max_bytes:
        raise ValueError(f"larger than {max_bytes} bytes")
    if too_deep(data, max_depth):
        raise ValueError(f"nested more than the {max_depth} levels a result may be")
