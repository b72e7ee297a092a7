"""Where a server finds league nights, and what a night's folders say.

A night lives in two folders that `league run` writes: `REPLAYS/<night>/` (the
manifest `night.json`, one replay per match, void markers, solo results, and the
progress file while it runs) and `LEAGUE/<night>/standings.json`. These files
are the public interface read here; nothing of the league's internals is needed.

A night is found by listing those two roots, never by joining a requested name
onto a path: a name that is not one of the listed folders (`..`, `a/b`, a
symlink's target) simply does not exist.
"""

from __future__ import annotations

import datetime as dt
import json
import os
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.jsondepth import too_deep

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
STANDINGS_NAME = "standings.json"
MANIFEST_NAME = "night.json"
PROGRESS_NAME = "progress.json"
REPLAY_SUFFIX = ".ndjson"
VOID_SUFFIX = ".void.json"
MAX_DOC_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64


class NightFileError(ValueError):
    """A night file that cannot be read: names the file and why."""


def read_json(path: Path, max_bytes: int = MAX_DOC_BYTES) -> Any:
    """A JSON document of a night folder, with size and depth caps (anyone may edit it)."""
    try:
        with open(path, "rb") as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise NightFileError(f"{path.name}: cannot read ({exc.strerror})") from None
    if len(data) > max_bytes:
        raise NightFileError(f"{path.name}: larger than {max_bytes} bytes")
    if too_deep(data, MAX_DEPTH):
        raise NightFileError(f"{path.name}: nested deeper than {MAX_DEPTH} levels")
    try:
        return json.loads(data)
    except (ValueError, UnicodeDecodeError) as exc:
        raise NightFileError(f"{path.name}: not JSON ({exc})") from None


def _mtime(path: Path) -> float | None:
    try:
        return path.stat().st_mtime
    except OSError:
        return None


def _pid_alive(pid: object) -> bool:
    if type(pid) is not int or pid <= 0:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


@dataclass(frozen=True)
class NightSummary:
    """One line of a list of nights."""

    name: str
    date: str  # UTC, of the standings (else of the manifest)
    entrants: int | None
    status: str  # finished | running | stopped | unfinished


@dataclass(frozen=True)
class NightFolders:
    """The two roots a server reads nights from (`--league-dir`, `--league-replays`)."""

    league_dir: Path
    replays_root: Path

    def names(self) -> list[str]:
        """Every night with a standings file or a manifest, by folder name."""
        found: set[str] = set()
        for root, marker in ((self.league_dir, STANDINGS_NAME), (self.replays_root, MANIFEST_NAME)):
            try:
                entries = list(os.scandir(root))
            except OSError:
                continue
            for entry in entries:
                if (
                    NAME.fullmatch(entry.name)
                    and entry.is_dir(follow_symlinks=False)
                    and os.path.isfile(os.path.join(entry.path, marker))
                ):
                    found.add(entry.name)
        return sorted(found)

    def find(self, name: str) -> str | None:
        """`name` when it is a listed night, else None (so no path is ever built from input)."""
        if not NAME.fullmatch(name):
            return None
        return name if name in self.names() else None

    def standings_path(self, night: str) -> Path:
        return self.league_dir / night / STANDINGS_NAME

    def replays_dir(self, night: str) -> Path:
        return self.replays_root / night

    def replay_ids(self, night: str) -> set[str]:
        """Match ids that have a replay file in the night's folder (the file is `<id>.ndjson`)."""
        try:
            names = os.listdir(self.replays_dir(night))
        except OSError:
            return set()
        return {n[: -len(REPLAY_SUFFIX)] for n in names if n.endswith(REPLAY_SUFFIX)}

    def replay_path(self, night: str, match_id: str) -> Path | None:
        """The replay of `match_id`, only when it is one of the listed files."""
        if match_id not in self.replay_ids(night):
            return None
        return self.replays_dir(night) / f"{match_id}{REPLAY_SUFFIX}"

    def load_standings(self, night: str) -> dict[str, Any] | None:
        path = self.standings_path(night)
        if not path.exists():
            return None
        doc = read_json(path)
        if not isinstance(doc, dict) or doc.get("format") != "cogolf-standings":
            raise NightFileError(f"{STANDINGS_NAME}: not a standings document")
        return doc

    def load_manifest(self, night: str) -> dict[str, Any] | None:
        path = self.replays_dir(night) / MANIFEST_NAME
        if not path.exists():
            return None
        doc = read_json(path)
        return doc if isinstance(doc, dict) else None

    def load_progress(self, night: str) -> dict[str, Any] | None:
        """The runner's progress file, with `running` decided here: a file that says
        running but whose process is gone (on this machine) is a stopped night."""
        path = self.replays_dir(night) / PROGRESS_NAME
        if not path.exists():
            return None
        try:
            doc = read_json(path, 1024 * 1024)
        except NightFileError:
            return None
        if not isinstance(doc, dict):
            return None
        if doc.get("state") in ("matches", "solo") and not _pid_alive(doc.get("pid")):
            doc = {**doc, "state": "stopped"}
        return doc

    def status(self, night: str) -> str:
        progress = self.load_progress(night)
        state = progress.get("state") if progress else None
        if state in ("matches", "solo"):
            return "running"
        if state == "stopped":
            return "stopped"
        return "finished" if self.standings_path(night).exists() else "unfinished"

    def summary(self, night: str) -> NightSummary:
        when = _mtime(self.standings_path(night)) or _mtime(self.replays_dir(night) / MANIFEST_NAME)
        date = (
            dt.datetime.fromtimestamp(when, dt.UTC).strftime("%Y-%m-%d %H:%M UTC") if when else ""
        )
        entrants: int | None = None
        try:
            manifest = self.load_manifest(night)
            if manifest is not None and isinstance(manifest.get("entrants"), list):
                entrants = len(manifest["entrants"])
            else:
                standings = self.load_standings(night)
                table = (standings or {}).get("games", {}).get("cogolf", {}).get("table")
                entrants = len(table) if isinstance(table, list) else None
        except (NightFileError, AttributeError):
            pass
        return NightSummary(night, date, entrants, self.status(night))


def list_nights(folders: NightFolders) -> list[NightSummary]:
    """Every night, newest first: what `/` and the nights index show."""
    rows = [folders.summary(n) for n in folders.names()]
    return sorted(rows, key=lambda r: (r.date, r.name), reverse=True)
