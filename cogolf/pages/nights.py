"""Where a server finds league nights, and what a night's folders say.

A night lives in two folders that `league run` writes: `REPLAYS/<night>/` (the
manifest `night.json`, one replay per match, void markers, solo results, and the
progress file while it runs) and `LEAGUE/<night>/standings.json`. These files
are the public interface read here; nothing of the league's internals is needed.

A night is found by listing those two roots, never by joining a requested name
onto a path: a name that is not one of the listed folders (`..`, `a/b`, a
symlink's target) simply does not exist. Anyone who can write a night folder may
plant links, FIFOs or devices in it, so every file is opened without following a
link, must be a regular file, and must really lie inside its night's folder.
"""

from __future__ import annotations

import datetime as dt
import errno
import json
import os
import re
import stat
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.jsondepth import too_deep

NAME = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,79}")
MATCH_ID = re.compile(r"[A-Za-z0-9][A-Za-z0-9._-]{0,199}")  # what `league run` names replays
STANDINGS_NAME = "standings.json"
MANIFEST_NAME = "night.json"
PROGRESS_NAME = "progress.json"
REPLAY_SUFFIX = ".ndjson"
VOID_SUFFIX = ".void.json"
GOLF_RESULTS = "golf"  # the night's golf result files, in the night's folder
GOLF_LIVE = Path("llm") / "golf"  # an LLM entrant's live golf replays, in the night's folder
MAX_DOC_BYTES = 16 * 1024 * 1024
MAX_DEPTH = 64
MAX_LISTED = 200  # nights on `/` and `/nights`: the newest, each read on every request


class NightFileError(ValueError):
    """A night file that cannot be read: names the file and why."""


def open_regular(path: Path, within: str | None = None) -> int:
    """A descriptor of `path` when it is a regular file really inside the folder `within`
    (a resolved path; default: the file's own folder). A symlink is never followed, and
    a FIFO or a device is refused before anything reads it (a FIFO would block the
    reader, and a server's worker thread, forever)."""
    base = within if within is not None else os.path.realpath(path.parent)
    try:
        fd = os.open(path, os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC)
    except OSError as exc:
        if exc.errno == errno.ELOOP:
            raise NightFileError(f"{path.name}: not a regular file (a symbolic link)") from None
        raise NightFileError(f"{path.name}: cannot read ({exc.strerror})") from None
    try:
        if not stat.S_ISREG(os.fstat(fd).st_mode):
            raise NightFileError(f"{path.name}: not a regular file")
        # The file as opened: a linked folder on the way resolves outside `base`.
        if not os.readlink(f"/proc/self/fd/{fd}").startswith(base.rstrip("/") + "/"):
            raise NightFileError(f"{path.name}: not a regular file of its night's folder")
    except BaseException:
        os.close(fd)
        raise
    return fd


def read_bytes(path: Path, max_bytes: int, within: str | None = None) -> bytes:
    """At most `max_bytes` of a night's file (NightFileError beyond), read as `open_regular`."""
    fd = open_regular(path, within)
    try:
        if os.fstat(fd).st_size > max_bytes:  # refused without reading it
            raise NightFileError(f"{path.name}: larger than {max_bytes} bytes")
        with os.fdopen(fd, "rb", closefd=False) as f:
            data = f.read(max_bytes + 1)
    except OSError as exc:
        raise NightFileError(f"{path.name}: cannot read ({exc.strerror})") from None
    finally:
        os.close(fd)
    if len(data) > max_bytes:
        raise NightFileError(f"{path.name}: larger than {max_bytes} bytes")
    return data


def read_json(path: Path, max_bytes: int = MAX_DOC_BYTES, within: str | None = None) -> Any:
    """A JSON document of a night folder, with size and depth caps (anyone may edit it)."""
    data = read_bytes(path, max_bytes, within)
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
    """Whether a process `pid` exists. Signal 0 only probes (nothing is delivered); a
    pid from a file is checked first, as 0 and negatives would name process groups."""
    if type(pid) is not int or not 0 < pid < 2**31:
        return False
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    except (OSError, OverflowError):
        return False
    return True


@dataclass(frozen=True)
class NightSummary:
    """One line of a list of nights."""

    name: str
    date: str  # UTC, of the standings (else of the manifest)
    entrants: int | None
    status: str  # finished | running | stopped | unfinished | void (every match void)


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

    def newest(self, names: list[str]) -> list[str]:
        """`names` newest first by their marker file's time (a cheap stat each)."""

        def when(night: str) -> float:
            return max(_mtime(self.standings_path(night)) or 0.0,
                       _mtime(self.replays_dir(night) / MANIFEST_NAME) or 0.0)  # fmt: skip

        return sorted(names, key=lambda n: (when(n), n), reverse=True)

    def standings_path(self, night: str) -> Path:
        return self.league_dir / night / STANDINGS_NAME

    def replays_dir(self, night: str) -> Path:
        return self.replays_root / night

    def league_base(self, night: str) -> str:
        """The resolved folder a night's standings must lie in (the root may be a link,
        the night's folder may not)."""
        return os.path.join(os.path.realpath(self.league_dir), night)

    def replays_base(self, night: str) -> str:
        return os.path.join(os.path.realpath(self.replays_root), night)

    def replay_ids(self, night: str) -> set[str]:
        """Match ids that have a replay file in the night's folder (the file is `<id>.ndjson`):
        regular files only, named as `league run` names them."""
        folder = self.replays_dir(night)
        if os.path.islink(folder):
            return set()
        try:
            entries = list(os.scandir(folder))
        except OSError:
            return set()
        ids = set()
        for e in entries:
            mid = e.name[: -len(REPLAY_SUFFIX)]
            if e.name.endswith(REPLAY_SUFFIX) and MATCH_ID.fullmatch(mid):
                try:
                    if e.is_file(follow_symlinks=False):
                        ids.add(mid)
                except OSError:
                    continue
        return ids

    def replay_path(self, night: str, match_id: str) -> Path | None:
        """The replay of `match_id`, only when it is one of the listed files."""
        if match_id not in self.replay_ids(night):
            return None
        return self.replays_dir(night) / f"{match_id}{REPLAY_SUFFIX}"

    def void_cause(self, night: str, match_id: str) -> str | None:
        """Why `match_id` of the night is void (its marker's cause), or None when it is not."""
        if not MATCH_ID.fullmatch(match_id):
            return None
        path = self.replays_dir(night) / f"{match_id}{VOID_SUFFIX}"
        if not os.path.lexists(path):
            return None
        try:
            doc = read_json(path, 1024 * 1024, within=self.replays_base(night))
        except NightFileError:
            return None
        cause = doc.get("cause") if isinstance(doc, dict) else None
        return str(cause)[:4000] if cause else "no cause recorded"

    def golf_replay(self, night: str, entrant: str, course: str) -> Path | None:
        """The live golf replay an LLM entrant played this course with (its folder under
        `llm/golf/` names it in `.complete`), or None. Names are only ever matched, the
        file is opened only as a regular one inside the night's folder."""
        if not (MATCH_ID.fullmatch(entrant) and MATCH_ID.fullmatch(course)):
            return None
        base = self.replays_dir(night) / GOLF_LIVE
        try:
            text = read_bytes(base / entrant / course / ".complete", 1024,
                              within=self.replays_base(night)).decode("utf-8").strip()
        except (NightFileError, UnicodeDecodeError):
            return None
        mid = text.removesuffix(REPLAY_SUFFIX)
        if not (text.endswith(REPLAY_SUFFIX) and MATCH_ID.fullmatch(mid)):
            return None
        path = base / text
        return path if path.is_file() and not path.is_symlink() else None

    def golf_result(self, night: str, entrant: str, course: str) -> Path | None:
        """The golf result file of an entrant's course in this night (the name golf's
        night gives it), or None; only a regular file, opened later as one."""
        if not (MATCH_ID.fullmatch(entrant) and MATCH_ID.fullmatch(course)):
            return None
        path = self.replays_dir(night) / GOLF_RESULTS / f"{entrant}.{course}.{night}.json"
        return path if path.is_file() and not path.is_symlink() else None

    def load_standings(self, night: str) -> dict[str, Any] | None:
        path = self.standings_path(night)
        if not os.path.lexists(path):
            return None
        doc = read_json(path, within=self.league_base(night))
        if not isinstance(doc, dict) or doc.get("format") != "cogolf-standings":
            raise NightFileError(f"{STANDINGS_NAME}: not a standings document")
        return doc

    def load_manifest(self, night: str) -> dict[str, Any] | None:
        path = self.replays_dir(night) / MANIFEST_NAME
        if not os.path.lexists(path):
            return None
        doc = read_json(path, within=self.replays_base(night))
        return doc if isinstance(doc, dict) else None

    def load_progress(self, night: str) -> dict[str, Any] | None:
        """The runner's progress file, with `running` decided here: a file that says
        running but whose process is gone (on this machine) is a stopped night."""
        path = self.replays_dir(night) / PROGRESS_NAME
        if not os.path.lexists(path):
            return None
        try:
            doc = read_json(path, 1024 * 1024, within=self.replays_base(night))
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
        if not self.standings_path(night).exists():
            return "unfinished"
        try:
            standings = self.load_standings(night) or {}
            counts = standings.get("games", {}).get("cogolf", {}).get("matches", {})
            played, void = counts.get("played"), counts.get("void")
        except (NightFileError, AttributeError):
            return "finished"
        # Every match void: the night ran, but nothing of it was played; never "finished".
        all_void = type(played) is int and type(void) is int and played == 0 and void > 0
        return "void" if all_void else "finished"

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


class NightList(list[NightSummary]):
    """The nights a list shows, and how many there are in all (`total`)."""

    total: int = 0


def list_nights(folders: NightFolders, limit: int = MAX_LISTED) -> NightList:
    """The newest nights (at most `limit`, each summary reads its files), newest first:
    what `/` and the nights index show."""
    names = folders.names()
    rows = [folders.summary(n) for n in folders.newest(names)[:limit]]
    out = NightList(sorted(rows, key=lambda r: (r.date, r.name), reverse=True))
    out.total = len(names)
    return out
