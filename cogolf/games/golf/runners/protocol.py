"""Reading a child harness's output into a `BatchResult`.

Only lines that start with the run's random token count, the first report per
call index wins, and anything malformed is ignored, so a program that prints
junk or dies half-way still yields exactly one result per call.
"""

from __future__ import annotations

import json
import secrets
from typing import Any

from cogolf.sandbox.api import BatchResult, CallResult, CallStatus, LoadStatus

_LOADS = {s.value: s for s in LoadStatus}
_CALLS = {s.value: s for s in CallStatus}
MAX_DETAIL_CHARS = 500


def new_token() -> str:
    return "@golf-" + secrets.token_hex(8)


def _records(stdout: bytes, token: str) -> list[dict[str, Any]]:
    prefix = token.encode() + b" "
    out = []
    for line in stdout.split(b"\n"):
        if not line.startswith(prefix):
            continue
        try:
            obj = json.loads(line[len(prefix) :].decode("utf-8"))
        except (UnicodeDecodeError, ValueError, RecursionError):
            continue
        if isinstance(obj, dict):
            out.append(obj)
    return out


def _detail(obj: dict[str, Any]) -> str:
    detail = obj.get("detail", "")
    return detail[:MAX_DETAIL_CHARS] if isinstance(detail, str) else ""


def parse_output(
    stdout: bytes,
    token: str,
    n_calls: int,
    *,
    ended_by_timeout: bool,
    end_detail: str,
    wall_seconds: float = 0.0,
) -> BatchResult:
    """`ended_by_timeout`: the hole's time ran out; calls with no report become
    timeouts then, and crashes otherwise (`end_detail` says how the process ended)."""
    load: LoadStatus | None = None
    load_detail = ""
    calls: dict[int, CallResult] = {}
    for obj in _records(stdout, token):
        if "load" in obj and load is None:
            load = _LOADS.get(obj["load"])
            load_detail = _detail(obj)
            continue
        i, status = obj.get("i"), _CALLS.get(obj.get("status", ""))
        if type(i) is not int or not 0 <= i < n_calls or status is None or i in calls:
            continue
        calls[i] = CallResult(status=status, value=obj.get("value"), detail=_detail(obj))
    if load is None:
        status = LoadStatus.LOAD_TIMEOUT if ended_by_timeout else LoadStatus.CRASH
        return BatchResult(
            load=status,
            load_detail=end_detail,
            results=[CallResult(status=CallStatus.NOT_RUN) for _ in range(n_calls)],
            wall_seconds=wall_seconds,
        )
    if load is not LoadStatus.OK:
        return BatchResult(
            load=load,
            load_detail=load_detail,
            results=[CallResult(status=CallStatus.NOT_RUN) for _ in range(n_calls)],
            wall_seconds=wall_seconds,
        )
    missing = CallResult(
        status=CallStatus.TIMEOUT if ended_by_timeout else CallStatus.CRASH, detail=end_detail
    )
    return BatchResult(
        load=load,
        results=[calls.get(i, missing) for i in range(n_calls)],
        wall_seconds=wall_seconds,
    )
