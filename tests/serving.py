"""Starting a real `cogolf serve` on a free loopback port, as every server test does."""

from __future__ import annotations

import re
import subprocess
import sys
from collections.abc import Sequence
from pathlib import Path
from typing import IO, Any

ROOT = Path(__file__).resolve().parents[1]


def start_serve(
    *args: str,
    cwd: Path = ROOT,
    stderr: IO[Any] | int | None = subprocess.DEVNULL,
    prefix: Sequence[str] = (),
) -> tuple[subprocess.Popen[bytes], str]:
    """`cogolf serve --port 0 ARGS` and the URL it says it listens on (its first line).
    `prefix` runs the server through another command (e.g. a shell that lowers a limit)."""
    argv = [*prefix, sys.executable, "-m", "cogolf", "serve", "--port", "0", *args]
    proc = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=stderr, cwd=cwd)
    assert proc.stdout is not None
    line = proc.stdout.readline().decode()
    found = re.search(r"listening on (http://\S+)", line)
    if not found:
        proc.kill()
    assert found, f"the server did not start: {line!r}"
    return proc, found.group(1)
