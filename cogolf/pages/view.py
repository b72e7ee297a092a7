"""One entry to the match view model, whatever the game: records in, a view out.

The records are plain JSON journal records. Whoever reads them (the server for a
page, the command line for a file) passes them through the same disclosure
policy the public endpoints use (`server.disclosure`): a journal without its
result line is a match under way, so only what both seats may know is shown.
"""

from __future__ import annotations

from collections.abc import Iterable
from pathlib import Path
from typing import Any

import msgspec

from cogolf.deck import Deck, PublicDeck
from cogolf.jsondepth import MAX_JSON_DEPTH, too_deep
from cogolf.pages.cogolf_view import CogolfBuilder, CogolfMatch, SpecLookup
from cogolf.pages.golf_view import GolfBuilder, GolfMatch
from cogolf.replay import MAX_LINE_BYTES
from cogolf.server.disclosure import JournalStream, View

MatchView = CogolfMatch | GolfMatch
MAX_JOURNAL_BYTES = 64 * 2**20  # what `--html` and `--explain` read of a file


class PageError(ValueError):
    """A journal that cannot be shown; the message names the file and the line."""


def game_of(header: Any) -> str:
    return "golf" if isinstance(header, dict) and header.get("game") == "golf" else "cogolf"


def journal_game(path: Path) -> str:
    """The game a journal file's header names ("cogolf" when unreadable: its reader says why)."""
    try:
        with open(path, "rb") as f:
            first = f.readline(MAX_LINE_BYTES)
        head = msgspec.json.decode(first) if not too_deep(first) else None
    except (OSError, msgspec.DecodeError, RecursionError):
        return "cogolf"
    return game_of(head)


def deck_specs(deck: Deck | PublicDeck | None) -> SpecLookup | None:
    """The public spec documents of a pack, by key (for a Cogolf page's prompts)."""
    if deck is None:
        return None
    public = deck.public if isinstance(deck, Deck) else deck

    def lookup(key: str) -> dict[str, Any] | None:
        entry = public.specs.get(key)
        return msgspec.to_builtins(entry.spec) if entry is not None else None

    return lookup


def decode_lines(data: bytes, where: str = "journal") -> list[dict[str, Any]]:
    """Every complete line of a journal as a JSON object; a torn last line is left out."""
    records = []
    for n, line in enumerate(data.split(b"\n")[:-1], start=1):
        if not line.strip():
            continue
        if len(line) > MAX_LINE_BYTES:
            raise PageError(f"{where}:{n}: line of {len(line)} bytes exceeds {MAX_LINE_BYTES}")
        if too_deep(line):
            raise PageError(f"{where}:{n}: nesting deeper than {MAX_JSON_DEPTH}")
        try:
            rec = msgspec.json.decode(line)
        except (msgspec.DecodeError, RecursionError) as exc:
            raise PageError(f"{where}:{n}: {exc}") from None
        if not isinstance(rec, dict):
            raise PageError(f"{where}:{n}: a record must be a JSON object")
        records.append(rec)
    if not records or records[0].get("kind") != "header":
        raise PageError(f"{where}:1: the first line must be the header")
    return records


def disclosed(records: list[dict[str, Any]], *, full: bool | None = None) -> list[dict[str, Any]]:
    """`records` as the public endpoints would serve them; `full` defaults to whether
    the journal holds its result (a finished match hides nothing)."""
    if full is None:
        full = any(r.get("kind") == "result" for r in records)
    stream = JournalStream(View(game_of(records[0] if records else None), full))
    return [served for rec in records for served in stream.feed(rec)]


def build_view(
    records: Iterable[Any],
    *,
    specs: SpecLookup | None = None,
    snapshot: dict[str, Any] | None = None,
    status: str | None = None,
) -> MatchView | None:
    """The view of a match from its (already disclosed) records.

    A spectator's feed has no header: pass its first message as `snapshot`.
    `status` is the server's (waiting, playing, finished, failed) when it knows it.
    """
    records = list(records)
    head = records[0] if records and isinstance(records[0], dict) else None
    golf = game_of(head) == "golf" or (snapshot is not None and snapshot.get("game") == "golf")
    builder: CogolfBuilder | GolfBuilder = GolfBuilder() if golf else CogolfBuilder(specs)
    if snapshot is not None:
        builder.snapshot(snapshot)
    for rec in records:
        builder.feed(rec)
    view = builder.build()
    if view is not None and status is not None and not view.ended:
        view.status = status
    return view


def view_from_file(path: Path, *, specs: SpecLookup | None = None) -> MatchView:
    """The view of a journal file, as a spectator of the public endpoints would see it."""
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_JOURNAL_BYTES + 1)  # never more, whatever the file claims
    except OSError as exc:
        raise PageError(f"{path}: cannot read ({exc.strerror})") from None
    if len(data) > MAX_JOURNAL_BYTES:
        raise PageError(
            f"{path}: a journal of more than {MAX_JOURNAL_BYTES // 2**20} MiB is not shown "
            "as a page (a whole match at every intake cap is about 1 MiB)"
        )
    view = build_view(disclosed(decode_lines(data, str(path))), specs=specs)
    if view is None:
        raise PageError(f"{path}:1: the first line must be the header")
    if not view.ended:
        view.status = "unfinished"
    return view
