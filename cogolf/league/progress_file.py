"""`progress.json` in a night's folder: how far a running night is, for pages to show.

Written atomically by `league run` when the night starts, after every match, when
the solo games start and when the night ends; nothing else reads or needs it (the
standings never do). `pid` lets a reader on the same machine tell a night still
running from one that was stopped.
"""

from __future__ import annotations

import datetime as dt
import json
import os
from pathlib import Path

from cogolf.league.progress import Progress

PROGRESS_NAME = "progress.json"
LEADERS = 10
PLAYING = 64  # matches in play listed (a night plays at most `parallel` at once)


def _now() -> str:
    return dt.datetime.now(dt.UTC).isoformat(timespec="seconds")


def write_progress(folder: Path, night: str, progress: Progress, state: str, void: int) -> None:
    """`state`: matches | solo | finished."""
    leaders = sorted(progress.points.items(), key=lambda kv: (-kv[1][0], -kv[1][1], kv[0]))
    doc = {
        "format": "cogolf-night-progress",
        "night": night,
        "state": state,
        "done": progress.done,
        "total": progress.total,
        "void": void,
        "pid": os.getpid(),
        "updated_at": _now(),
        "leaders": [{"name": n, "points": p, "margin": m} for n, (p, m) in leaders[:LEADERS]],
        # What a spectator of the running night wants too: the time left at this run's
        # pace (null before a match finished), the matches in play, the solo phase.
        "elapsed_seconds": round(progress.elapsed(), 1),
        "eta_seconds": None if (eta := progress.eta()) is None else round(eta, 1),
        "playing": sorted(progress.playing)[:PLAYING],
        "solo": None if progress.solo is None else
        {"done": progress.solo[0], "total": progress.solo[1]},
    }
    path = folder / PROGRESS_NAME
    # The temporary name is predictable: whatever sits there (a link planted by someone
    # who can write the folder) is removed, and the file made anew, never followed.
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    flags = os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW | os.O_CLOEXEC
    try:
        tmp.unlink(missing_ok=True)
        with os.fdopen(os.open(tmp, flags, 0o644), "w") as f:
            f.write(json.dumps(doc, indent=2) + "\n")
        tmp.replace(path)
    except OSError:
        pass  # progress is a courtesy for spectators; the night goes on without it
