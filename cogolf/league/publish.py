"""Computing a night's standings from its folder and writing `standings.json`.

`league run` and `league standings` both end here, so the file a night run
publishes is the file anyone recomputes from the same replays. With `checks`
(always, from the command line) only what the night can prove counts: replays
that verify and result files the runner signed (`proof`).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from cogolf.league import ratings
from cogolf.league.proof import Checks, night_key, prove_replays
from cogolf.league.records import read_night_dir
from cogolf.league.results import read_results
from cogolf.league.standings import compute, to_json

STANDINGS_NAME = "standings.json"


def standings_for_dir(
    replays_dir: Path,
    anchor: str | None = None,
    *,
    samples: int = ratings.BOOTSTRAP_SAMPLES,
    checks: Checks | None = None,
) -> dict[str, Any]:
    """Everything comes from the folder: replays, void markers, manifest, result files.
    Without `checks` the files are trusted as they are (for folders built in memory)."""
    records = read_night_dir(replays_dir)
    if checks is None:
        solo = read_results(Path(replays_dir), records.night)
        return compute(records, anchor, samples=samples, solo=solo)
    key = night_key(Path(replays_dir), create=True)
    if key is None:
        raise OSError(f"{replays_dir}: cannot read or make the night's key")
    records = asyncio.run(prove_replays(records, Path(replays_dir), key, checks))
    solo = read_results(Path(replays_dir), records.night, key=key, signed=True)
    return compute(records, anchor, samples=samples, solo=solo)


def write_standings(doc: dict[str, Any], path: Path) -> Path:
    """Write atomically, so a reader never sees half a file."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(to_json(doc))
    tmp.replace(path)
    return path


def default_standings_path(league_root: Path, night: str) -> Path:
    return Path(league_root) / night / STANDINGS_NAME
