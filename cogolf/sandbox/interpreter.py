"""Finding the real interpreter binary and the child runner.

`python3` may be a shell shim that costs tens of milliseconds per start, and the
server itself may run inside a virtualenv; the sandbox starts the binary behind
both, with no site packages.
"""

from __future__ import annotations

import os
import sys

CHILD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
INTERPRETER_FLAGS = ("-I", "-S", "-B", "-X", "utf8")


class InterpreterNotFound(RuntimeError):
    pass


def real_python() -> str:
    candidates = [getattr(sys, "_base_executable", ""), sys.executable]
    for cand in candidates:
        if not cand:
            continue
        path = os.path.realpath(cand)
        if not os.access(path, os.X_OK):
            continue
        with open(path, "rb") as fh:
            if fh.read(2) == b"#!":
                continue  # a script wrapper, not the interpreter
        return path
    raise InterpreterNotFound(f"no interpreter binary among {candidates}")


def child_argv(python: str, *extra: str) -> list[str]:
    return [python, *INTERPRETER_FLAGS, CHILD_PATH, *extra]
