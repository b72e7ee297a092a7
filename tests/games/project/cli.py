"""Running `cogolf project attempt` as a user would, for every project test."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any, NamedTuple

REPO = Path(__file__).resolve().parents[3]


class AttemptRun(NamedTuple):
    result: dict[str, Any]
    """The result document written to `--out`."""
    stdout: str


def project_attempt(
    task: Path,
    changes: Path,
    out: Path,
    *,
    entrant: str = "tester",
    attempt: int | None = None,
    timeout: float = 600,
) -> AttemptRun:
    """Score `changes` against `task`; the command must succeed and print what it wrote."""
    argv = [
        sys.executable,
        "-m",
        "cogolf",
        "project",
        "attempt",
        str(task),
        str(changes),
        "--entrant",
        entrant,
        "--out",
        str(out),
    ]
    if attempt is not None:
        argv += ["--attempt", str(attempt)]
    done = subprocess.run(
        argv, capture_output=True, text=True, cwd=REPO, timeout=timeout, check=False
    )
    assert done.returncode == 0, done.stderr[-2000:]
    result: dict[str, Any] = json.loads(out.read_text(encoding="utf-8"))
    assert result == json.loads(done.stdout), "stdout and --out disagree"
    return AttemptRun(result, done.stdout)
