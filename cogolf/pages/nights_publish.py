"""`cogolf league publish`: a night as a static site any static host (or a disk) serves.

    SITE/index.html              the night: standings, head to head, game tables, matches
    SITE/matches/<match_id>.html one page per replay
    SITE/golf/<entrant>.<course>.html an entrant's golf course: its live replay or result
    SITE/standings.json          the standings it shows
    SITE/static/*.css            the stylesheets

Pages hold no script at all, and each carries its Content-Security-Policy in a
meta tag (a static host sends no headers of ours). Every link is relative, so
the folder works from `file://` as well as from any path on a host.

Only what the night's files say is written (no file of the night is copied as
it is), and every file is written by renaming a new file into place, so a link
or a FIFO planted in an earlier site is replaced, never written through.
"""

from __future__ import annotations

import os
import shutil
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import quote

from cogolf.pages.golf_result import result_page_html
from cogolf.pages.nights import (
    MATCH_ID,
    MAX_DOC_BYTES,
    NAME,
    REPLAY_SUFFIX,
    NightFileError,
    NightFolders,
    read_bytes,
    read_json,
)
from cogolf.pages.nights_match import match_page_html, summary_html
from cogolf.pages.nights_render import STATIC_CSP, render_night
from cogolf.pages.nights_view import build_night
from cogolf.pages.render import static_dir

SITE_MARKER = ".cogolf-site"


class PublishError(ValueError):
    """Why a night cannot be published: names the folder or file."""


@dataclass(frozen=True)
class Published:
    index: Path
    matches: int


def night_name(replays_dir: Path) -> str:
    """The night's name: its manifest's, else its folder's; either must be a night name."""
    manifest = replays_dir / "night.json"
    name = replays_dir.name
    if manifest.is_file():
        try:
            doc = read_json(manifest)
        except NightFileError as exc:
            raise PublishError(f"{replays_dir}: {exc}") from None
        if isinstance(doc, dict) and isinstance(doc.get("name"), str):
            name = doc["name"]
    if not NAME.fullmatch(name):
        raise PublishError(f"{replays_dir}: {name!r} is not a night name")
    return name


def _write(path: Path, data: bytes) -> None:
    """`data` as the file `path`: a new file renamed into place (whatever was there, a
    link included, is replaced; nothing is written through it)."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_EXCL | os.O_NOFOLLOW, 0o644)
        with os.fdopen(fd, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
    except OSError as exc:
        tmp.unlink(missing_ok=True)
        raise PublishError(f"{path}: cannot write ({exc.strerror})") from None


def _fresh_dir(path: Path) -> None:
    """`path` as an empty real folder: a planted link there is removed (never its target)."""
    if path.is_symlink() or (path.exists() and not path.is_dir()):
        path.unlink()
    elif path.is_dir():
        shutil.rmtree(path)  # removes links inside, never follows them
    path.mkdir()


def _prepare(out: Path) -> None:
    if out.is_symlink():
        raise PublishError(f"{out}: a symbolic link; give the folder it points to")
    if out.exists() and not out.is_dir():
        raise PublishError(f"{out}: exists and is not a folder")
    if out.is_dir() and any(out.iterdir()) and not (out / SITE_MARKER).is_file():
        raise PublishError(f"{out}: not empty and not a published night; choose an empty folder")
    out.mkdir(parents=True, exist_ok=True)
    try:
        _fresh_dir(out / "matches")
        _fresh_dir(out / "static")
        _fresh_dir(out / "golf")
    except OSError as exc:
        raise PublishError(f"{out}: cannot prepare the site ({exc.strerror})") from None
    _write(out / SITE_MARKER, b"a night published by `cogolf league publish`\n")


def publish(replays_dir: Path, out: Path, league_dir: Path) -> Published:
    replays_dir = Path(replays_dir)
    if replays_dir.is_symlink():  # its files would all lie outside it, and none be shown
        raise PublishError(f"{replays_dir}: a symbolic link; give the folder it points to")
    if not replays_dir.is_dir():
        raise PublishError(f"{replays_dir}: not a folder")
    if (replays_dir / "standings.json").is_file() and not (replays_dir / "night.json").exists():
        raise PublishError(
            f"{replays_dir}: this is a standings folder; give the night's replay folder "
            f"(replays/{replays_dir.name}/)"
        )
    name = night_name(replays_dir)
    if replays_dir.name != name:
        raise PublishError(f"{replays_dir}: the folder of night {name!r} must be named {name}")
    folders = NightFolders(league_dir, replays_dir.parent)
    standings = folders.standings_path(name)
    if not standings.is_file():
        raise PublishError(
            f"{standings}: no standings; run `cogolf league standings {replays_dir}` first"
        )
    try:
        folders.load_standings(name)
        standings_bytes = read_bytes(standings, MAX_DOC_BYTES, folders.league_base(name))
    except NightFileError as exc:
        raise PublishError(f"{standings}: {exc}") from None
    _prepare(out)
    night = build_night(folders, name, lambda mid: f"matches/{quote(mid)}.html",
                        lambda e, c: f"golf/{quote(e)}.{quote(c)}.html")  # fmt: skip
    night.status = "finished" if night.status == "running" else night.status
    for css in ("style.css", "night.css"):
        _write(out / "static" / css, (static_dir() / css).read_bytes())
    _write(out / "standings.json", standings_bytes)
    count = 0
    for mid in sorted(folders.replay_ids(name)):
        path = replays_dir / f"{mid}{REPLAY_SUFFIX}"
        try:
            html = match_page_html(path, back="../index.html", night=name, standalone=True,
                                   within=folders.replays_base(name))  # fmt: skip
        except NightFileError:  # swapped for a link or a FIFO since it was listed
            continue
        _write(out / "matches" / f"{mid}.html", html.encode("utf-8"))
        count += 1
    # A void match's page says why, with or without a replay (the night page links it).
    for line in night.matches:
        mid = line.match_id
        if line.outcome != "void" or not MATCH_ID.fullmatch(mid):
            continue
        void = folders.void_cause(name, mid)
        path = replays_dir / f"{mid}{REPLAY_SUFFIX}"
        if path.is_file():
            try:
                html = match_page_html(path, back="../index.html", night=name, standalone=True,
                                       within=folders.replays_base(name), void=void)
            except NightFileError:
                continue
        else:
            html = summary_html(path, back="../index.html", night=name, static_root="../static/",
                                home="../index.html", csp_meta=STATIC_CSP, void=void)
        _write(out / "matches" / f"{mid}.html", html.encode("utf-8"))
    # An LLM entrant's live golf replays: one page each, its holes' sources in it; a
    # file entrant's result, hole by hole, without its sources.
    for course, table in (night.golf or {}).get("per_course", {}).items():
        for row in table["rows"]:
            entrant = row["entrant"]
            if not row["replay"]:
                continue
            replay = folders.golf_replay(name, entrant, course)
            result = folders.golf_result(name, entrant, course) if replay is None else None
            try:
                if replay is not None:
                    html: str | None = match_page_html(
                        replay, back="../index.html", night=name, standalone=True,
                        within=folders.replays_base(name))  # fmt: skip
                elif result is not None:
                    html = result_page_html(result, entrant=entrant, course=course,
                                            back="../index.html", night=name,
                                            within=folders.replays_base(name), standalone=True)
                else:
                    continue
            except NightFileError:
                continue
            if html is not None:
                _write(out / "golf" / f"{entrant}.{course}.html", html.encode("utf-8"))
    index = out / "index.html"
    page = render_night(
        night, static_root="static/", home="index.html", scripts=False, csp_meta=STATIC_CSP
    )
    _write(index, page.encode("utf-8"))
    return Published(index, count)
