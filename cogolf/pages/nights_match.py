"""The page of one match of a night, from its replay file.

The match renderer's page (hole timeline, tests, implementations, endcard): served
by `cogolf serve` at `/nights/{name}/matches/{id}`, or as one self-contained file
in a published site. A replay the view cannot show gets an escaped summary that
names the fault instead.
"""

from __future__ import annotations

from functools import cache
from pathlib import Path

from cogolf import messages as m
from cogolf.deck import load_public
from cogolf.pages.nights_render import STATIC_CSP, environment
from cogolf.pages.render import render_match, render_standalone
from cogolf.pages.view import PageError, SpecLookup, deck_specs, view_from_file
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
    standalone: bool = False,
) -> str:
    """A night's match page; `standalone`: one file with its style and script inline
    (a published site), else the page `cogolf serve` serves."""
    try:
        view = view_from_file(replay_path, specs=_specs())
    except PageError as exc:
        root = "../static/" if standalone else "/static/"
        home = "../index.html" if standalone else "/"
        return summary_html(replay_path, back=back, night=night, static_root=root,
                            home=home, error=str(exc),
                            csp_meta=STATIC_CSP if standalone else "")  # fmt: skip
    up = {"back": back, "back_label": f"League night {night}"}
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
) -> str:
    header = result = None
    holes: list[m.HoleScore] = []
    try:
        replay = read_replay(replay_path)
        header, result = replay.header, replay.result
        holes = [e for e in replay.events if isinstance(e, m.HoleScore)]
    except ReplayError as exc:
        error = str(exc)
    if error is not None:
        error = error.replace(str(replay_path), replay_path.name)
    return environment().get_template("night_match.html").render(
        header=header, result=result, holes=holes, error=error, back=back, night=night,
        match_id=replay_path.name.removesuffix(".ndjson"), static_root=static_root, home=home,
        csp_meta=csp_meta,
    )  # fmt: skip
