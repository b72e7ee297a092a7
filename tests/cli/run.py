"""Running `cogolf` as a user does: a separate process, its exit status and its output."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path


def cogolf(
    *args: str, cwd: Path | None = None, timeout: float = 120
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=timeout,
        stdin=subprocess.DEVNULL,
    )


def imported_by(*argv: str) -> set[str]:
    """The modules a `cogolf ARGV` process has imported when its command returns."""
    probe = (
        "import sys\n"
        "from cogolf.cli import main\n"
        "try:\n"
        f"    main({list(argv)!r})\n"
        "except SystemExit:\n"
        "    pass\n"
        "sys.stderr.write('\\nMODULES ' + ' '.join(sorted(sys.modules)) + '\\n')\n"
    )
    done = subprocess.run(
        [sys.executable, "-c", probe], capture_output=True, text=True, timeout=120
    )
    line = done.stderr.rsplit("MODULES ", 1)[-1]
    return set(line.split())
