"""Lint (ruff) and type-check (mypy) counts for a submission, reported beside the
pass rate and never mixed into it. Both run with their own settings
(`ruff --isolated`, mypy with an empty config file) so a submission's config
files cannot load plugins or silence them."""

from __future__ import annotations

import contextlib
import json
import os
import re
import shutil
import sys
from collections import Counter
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.evaluation.pyenv import world_accessible
from cogolf.evaluation.walled import Walls, run_evaluator

QUALITY_SECONDS = 180.0
DETAIL_CHARS = 400
_MYPY_LINE = re.compile(rb"^[^\n]*:\d+(:\d+)?: error: [^\n]*", re.M)


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
    return QualityResult("ruff", len(findings), ruff_detail(findings, work))


def ruff_detail(findings: list[Any], work: Path, shown: int = 3) -> str:
    """What ruff flagged: each rule with its count, then the first few findings."""
    rows = [f for f in findings if isinstance(f, dict)]
    codes = Counter(str(f.get("code") or "syntax") for f in rows)
    by_rule = ", ".join(f"{code} x{n}" for code, n in sorted(codes.items(),
                                                            key=lambda kv: (-kv[1], kv[0])))
    first = []
    for f in rows[:shown]:
        name = str(f.get("filename", ""))
        with contextlib.suppress(ValueError):
            name = str(Path(name).relative_to(work))
        row = (f.get("location") or {}).get("row", "?")
        first.append(f"{name}:{row} {f.get('code') or 'syntax'} {f.get('message', '')}")
    return "; ".join([by_rule, *first])[:DETAIL_CHARS] if rows else ""


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
    errors = [m.group(0).decode("utf-8", "replace") for m in _MYPY_LINE.finditer(run.stdout)]
    return QualityResult("mypy", len(errors), "; ".join(errors[:3])[:DETAIL_CHARS])
