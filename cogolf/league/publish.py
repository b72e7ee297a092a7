"""Computing a night's standings from its folder and writing `standings.json`.

`league run` and `league standings` both end here, so the file a night run
publishes is the file anyone recomputes from the same replays. With `checks`
(always, from the command line) only what the night can prove counts: replays
of planned matches (`planfile`) that verify, and result files the runner signed
(`proof`).
"""

from __future__ import annotations

import asyncio
import os
from pathlib import Path
from typing import Any

from cogolf.league.planfile import screening_plan
from cogolf.league.proof import Checks, night_key, prove_replays
from cogolf.league.records import read_night_dir
from cogolf.league.results import read_results
from cogolf.league.standings import compute, to_json
from cogolf.replay import ReplayError

STANDINGS_NAME = "standings.json"


def standings_for_dir(
    replays_dir: Path,
    anchor: str | None = None,
    *,
    checks: Checks | None = None,
) -> dict[str, Any]:
    """Everything comes from the folder: replays, void markers, manifest, result files.
    Without `checks` the files are trusted as they are, no plan screening them (for
    folders built in memory)."""
    if checks is None:
        records = read_night_dir(replays_dir)
        solo = read_results(Path(replays_dir), records.night)
        return compute(records, anchor, solo=solo)
    if not Path(replays_dir).is_dir():
        raise ReplayError(f"{replays_dir}: not a directory")
    key = night_key(Path(replays_dir), create=True)
    if key is None:
        raise OSError(f"{replays_dir}: cannot read or make the night's key")
    plan, unplanned = screening_plan(Path(replays_dir), key)
    records = read_night_dir(replays_dir, plan)
    if unplanned is not None:
        records.problems.append(unplanned)
    records = asyncio.run(prove_replays(records, Path(replays_dir), key, checks))
    solo = read_results(Path(replays_dir), records.night, key=key, signed=True)
    return compute(records, anchor, solo=solo)


STANDINGS_POINTER = ".standings"  # in a night's folder: where its standings were last written


def write_standings(doc: dict[str, Any], path: Path, night_dir: Path | None = None) -> Path:
    """Write atomically, so a reader never sees half a file; with `night_dir`, the night
    remembers where (`league publish NIGHT_DIR` finds it from any folder)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(to_json(doc))
    tmp.replace(path)
    if night_dir is not None:
        pointer = Path(night_dir) / STANDINGS_POINTER
        tmp = pointer.with_name(f"{pointer.name}.{os.getpid()}.tmp")
        try:
            tmp.write_text(str(path.resolve()) + "\n", encoding="utf-8")
            tmp.replace(pointer)
        except OSError:
            pass  # a courtesy for `league publish`; the standings are written
    return path


def league_dir_of(night_dir: Path) -> Path | None:
    """The league folder holding this night's standings, as the night remembers it (or the
    `league/` beside its `replays/`), or None when neither holds them."""
    night_dir = Path(night_dir)
    try:
        text = (night_dir / STANDINGS_POINTER).read_text(encoding="utf-8").strip()
    except (OSError, UnicodeDecodeError):
        text = ""
    for standings in ([Path(text)] if text else []) + [
        night_dir.resolve().parent.parent / "league" / night_dir.name / STANDINGS_NAME
    ]:
        # Only the layout publish reads: <league>/<night>/standings.json
        if standings.name == STANDINGS_NAME and standings.is_file():
            return standings.parent.parent
    return None


def default_standings_path(league_root: Path, night: str) -> Path:
    return Path(league_root) / night / STANDINGS_NAME
