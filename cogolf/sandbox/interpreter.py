"""Finding the real interpreter binary and the child runner.

`python3` may be a shell shim that costs tens of milliseconds per start, and the
server itself may run inside a virtualenv; the sandbox starts the binary behind
both, with no site packages.
"""

from __future__ import annotations

import os
import sys

CHILD_PATH = os.path.join(os.path.dirname(os.path.abspath(__file__)), "child.py")
# `-I` without its `-E`: the environment is read, so PYTHONHASHSEED can fix string
# hashing; every child is started with an environment holding nothing else.
INTERPRETER_FLAGS = ("-s", "-P", "-S", "-B", "-X", "utf8")
MAX_HASH_SEED = 4294967295  # the largest PYTHONHASHSEED the interpreter accepts


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


def child_env(hash_seed: int | None) -> dict[str, str]:
    """A child's whole environment: a fixed hash seed, or nothing (a random one)."""
    return {} if hash_seed is None else {"PYTHONHASHSEED": str(hash_seed)}
