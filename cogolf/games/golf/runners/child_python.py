"""Child harness for the Python course (stdlib only; copied into the scratch dir).

Reads a line {"token", "per_test_seconds"} from stdin, runs submission.py in a
fresh namespace, then reads one JSON argument list per line (the parent sends the
next only after this one's report), calls f(*args) under a CPU timer, and writes
one line "<token> <json>" per event to the original stdout. The submission's own
prints go to stderr so they cannot be mistaken for results. The timer is only the
fast path: the parent kills a test that runs over, whatever the timer says.
"""

from __future__ import annotations

import json
import os
import signal
import sys
from typing import Any


class _TestTimeout(BaseException):
    pass


def _on_timer(signum: int, frame: object) -> None:
    raise _TestTimeout()


def _plain(v: Any, depth: int = 0) -> Any:
    if depth > 64:
        raise ValueError("nesting too deep")
    t = type(v)
    if v is None or t is bool or t is int or t is str:
        return v
    if t is float:
        if v != v or v in (float("inf"), float("-inf")):
            raise ValueError("non-finite float")
        return v
    if t is list or t is tuple:
        return [_plain(x, depth + 1) for x in v]
    if t is dict and all(type(k) is str for k in v):
        return {k: _plain(x, depth + 1) for k, x in v.items()}
    raise ValueError(t.__name__ + " is not a value")


def main() -> None:
    tests = os.fdopen(os.dup(0), "rb")
    request = json.loads(tests.readline())
    token = request["token"]
    limit = float(request["per_test_seconds"])
    out = os.fdopen(os.dup(1), "w", encoding="utf-8")
    os.dup2(2, 1)
    null = os.open(os.devnull, os.O_RDONLY)
    os.dup2(null, 0)
    sys.stdout = sys.stderr
    sys.stdin = open(os.devnull)  # noqa: SIM115 - lives as long as the process

    def emit(obj: dict[str, Any]) -> None:
        out.write(token + " " + json.dumps(obj, ensure_ascii=False, allow_nan=False) + "\n")
        out.flush()

    with open("submission.py", "rb") as fh:
        source = fh.read()
    try:
        code = compile(source, "submission.py", "exec", dont_inherit=True)
    except (SyntaxError, ValueError) as exc:
        emit({"load": "syntax_error", "detail": type(exc).__name__ + ": " + str(exc)[:500]})
        return
    namespace = {"__name__": "__golf__"}
    signal.signal(signal.SIGPROF, _on_timer)
    try:
        signal.setitimer(signal.ITIMER_PROF, limit * 2)
        exec(code, namespace)
        signal.setitimer(signal.ITIMER_PROF, 0)
    except _TestTimeout:
        emit({"load": "load_timeout", "detail": "module body ran out of time"})
        return
    except BaseException as exc:
        signal.setitimer(signal.ITIMER_PROF, 0)
        emit({"load": "load_error", "detail": type(exc).__name__ + ": " + str(exc)[:500]})
        return
    fn = namespace.get("f")
    if not callable(fn):
        emit({"load": "missing_function", "detail": "no callable named f"})
        return
    emit({"load": "ok"})
    for i, line in enumerate(iter(tests.readline, b"")):
        args = json.loads(line)
        try:
            signal.setitimer(signal.ITIMER_PROF, limit)
            value = fn(*args)
            signal.setitimer(signal.ITIMER_PROF, 0)
        except _TestTimeout:
            emit({"i": i, "status": "timeout", "detail": f"over {limit:.2f}s of CPU"})
            continue
        except BaseException as exc:
            signal.setitimer(signal.ITIMER_PROF, 0)
            emit({"i": i, "status": "error", "detail": type(exc).__name__ + ": " + str(exc)[:200]})
            continue
        try:
            emit({"i": i, "status": "ok", "value": _plain(value)})
        except (ValueError, RecursionError, OverflowError) as exc:
            emit({"i": i, "status": "invalid", "detail": str(exc)[:200]})


if __name__ == "__main__":
    main()
