"""Lint (ruff) and type-check (mypy) counts for a submission, reported beside the
pass rate and never mixed into it. Both run with their own settings
(`ruff --isolated`, mypy with an empty config file) so a submission's config
files cannot load plugins or silence them."""

from __future__ import annotations

import json
import os
import re
import shutil
import sys
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.evaluation.pyenv import world_accessible
from cogolf.evaluation.walled import Walls, run_evaluator

QUALITY_SECONDS = 180.0
_MYPY_ERROR = re.compile(rb"^[^\n]*:\d+(:\d+)?: error: ", re.M)


@dataclass(frozen=True)
class QualityResult:
    tool: str
    count: int | None  # None when the tool could not run
    detail: str = ""

    def to_json(self) -> dict[str, Any]:
        return {"tool": self.tool, "count": self.count, "detail": self.detail}


def ruff_binary() -> Path | None:
    beside = Path(sys.executable).parent / "ruff"
    found = beside if beside.is_file() else shutil.which("ruff")
    return Path(found) if found else None


async def run_ruff(work: Path, paths: tuple[str, ...]) -> QualityResult:
    ruff = ruff_binary()
    if ruff is None:
        return QualityResult("ruff", None, "ruff is not installed")
    argv = [str(ruff), "check", "--isolated", "--output-format", "json", "--exit-zero",
            "--no-cache", *paths]
    walls = Walls(readable=(work,), executable=(ruff.resolve(),), drop_uid=world_accessible(ruff),
                  max_processes=8)  # ruff checks files on a few threads
    run = await run_evaluator(argv, cwd=work, wall_seconds=QUALITY_SECONDS, walls=walls)
    try:
        findings = json.loads(run.stdout or b"null")
    except ValueError:
        findings = None
    if not isinstance(findings, list):
        return QualityResult("ruff", None, run.stderr.decode("utf-8", "replace")[-300:])
    return QualityResult("ruff", len(findings))


async def run_mypy(work: Path, paths: tuple[str, ...], scratch: Path) -> QualityResult:
    scratch.mkdir(parents=True, exist_ok=True)
    config = scratch / "mypy.ini"
    config.write_text("[mypy]\n", encoding="utf-8")
    argv = [sys.executable, "-m", "mypy", "--config-file", str(config), "--ignore-missing-imports",
            "--no-error-summary", "--cache-dir", str(scratch / "cache"), "--no-pretty", *paths]
    # mypy runs on this (perhaps root-private) interpreter and keeps the uid: it reads
    # the submission but never executes it, and its config (plugins) is ours.
    walls = Walls(readable=(work, scratch, Path(sys.prefix), Path(sys.base_prefix)),
                  writable=(scratch,), executable=(Path(os.path.realpath(sys.executable)),),
                  drop_uid=False, max_processes=8)
    run = await run_evaluator(argv, cwd=work, wall_seconds=QUALITY_SECONDS, walls=walls)
    if run.timed_out or run.returncode not in (0, 1):
        return QualityResult("mypy", None, (run.reason or run.stderr.decode("utf-8", "replace"))
                             [-300:])
    return QualityResult("mypy", len(_MYPY_ERROR.findall(run.stdout)))
