"""The page of one match of a night, from its replay file.

The match renderer's page (hole timeline, tests, implementations, endcard): served
by `cogolf serve` at `/nights/{name}/matches/{id}`, or as one self-contained file
in a published site. A replay the view cannot show gets an escaped summary that
names the fault instead.
"""

from __future__ import annotations

import os
from functools import cache
from pathlib import Path

from cogolf import messages as m
from cogolf.deck import load_public
from cogolf.pages.nights import open_regular
from cogolf.pages.nights_render import STATIC_CSP
from cogolf.pages.render import ENV, render_match, render_standalone
from cogolf.pages.view import (
    MAX_JOURNAL_BYTES,
    PageError,
    SpecLookup,
    deck_specs,
    view_from_file,
)
from cogolf.replay import ReplayError, read_replay


@cache
def _specs() -> SpecLookup | None:
    """The spec texts of the packaged deck, for the prompts on a Cogolf match's page."""
    try:
        return deck_specs(load_public())
    except Exception:  # a damaged install still shows the matches, without prompts
        return None


def match_page_html(
    replay_path: Path,
    *,
    back: str,
    night: str,
    within: str,
    standalone: bool = False,
    running: bool = False,
    void: str | None = None,
) -> str:
    """A night's match page; `standalone`: one file with its style and script inline
    (a published site), else the page `cogolf serve` serves. The replay must be a regular
    file inside the resolved folder `within` (NightFileError otherwise); it is read
    through the descriptor checked, so a file swapped for a link meanwhile is not read.
    `running`: the night is being played, so a journal without its end is a match in play
    (a live page that follows it), not an unfinished one; `void`: the match is void, why."""
    fd = open_regular(replay_path, within)
    try:
        return _page(replay_path, Path(f"/proc/self/fd/{fd}"), back=back, night=night,
                     standalone=standalone, size=os.fstat(fd).st_size, running=running,
                     void=void)  # fmt: skip
    finally:
        os.close(fd)


def _page(
    replay_path: Path, opened: Path, *, back: str, night: str, standalone: bool, size: int,
    running: bool = False, void: str | None = None,
) -> str:
    try:
        view = view_from_file(opened, specs=_specs())
    except PageError as exc:
        root = "../static/" if standalone else "/static/"
        home = "../index.html" if standalone else "/"
        error = str(exc).replace(str(opened), replay_path.name)
        if size > MAX_JOURNAL_BYTES:  # the summary would read it all: the error says why
            opened = None
        return summary_html(replay_path, back=back, night=night, static_root=root,
                            home=home, error=error, opened=opened,
                            csp_meta=STATIC_CSP if standalone else "")  # fmt: skip
    up = {"back": back, "back_label": f"League night {night}", "void": void}
    if void is None and running and not standalone and view.status == "unfinished":
        view.status = "playing"
        return render_match(view, live=True, poll=True, **up)
    if void is not None and not view.ended:
        view.status = "void"
    return render_standalone(view, **up) if standalone else render_match(view, **up)


def summary_html(
    replay_path: Path,
    *,
    back: str,
    night: str,
    static_root: str,
    home: str,
    error: str | None = None,
    csp_meta: str = "",
    opened: Path | None = None,
    void: str | None = None,
) -> str:
    """What the replay says of its match; `opened`: where to read it (None: not at all);
    `void`: why the match is void (a void match may have no replay at all)."""
    header = result = None
    holes: list[m.HoleScore] = []
    try:
        if opened is not None:
            replay = read_replay(opened)
            header, result = replay.header, replay.result
            holes = [e for e in replay.events if isinstance(e, m.HoleScore)]
    except ReplayError as exc:
        error = str(exc)
    if error is not None and opened is not None:
        error = error.replace(str(opened), replay_path.name)
    return ENV.get_template("night_match.html").render(
        header=header, result=result, holes=holes, error=error, back=back, night=night,
        match_id=replay_path.name.removesuffix(".ndjson"), static_root=static_root, home=home,
        csp_meta=csp_meta, void=void,
    )  # fmt: skip
