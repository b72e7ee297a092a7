"""The page of one match of a night, from its replay file.

The full match view (hole timeline, tests, implementations, endcard) is the match
renderer's job, `render_match_html(replay_path) -> str`. Until it is wired in,
`match_page_html` is the single call site that renders a match for the night
pages (the server's `/nights/{name}/matches/{id}` and every published match
page) and falls back to an escaped summary: names, aliases, per-hole scores and
the result, read from the replay.
"""

from __future__ import annotations

from pathlib import Path

from cogolf import messages as m
from cogolf.pages.nights_render import environment
from cogolf.replay import ReplayError, read_replay


def match_page_html(
    replay_path: Path,
    *,
    back: str,
    night: str,
    static_root: str = "/static/",
    home: str = "/",
    csp_meta: str | None = None,
) -> str:
    """THE call site for a night's match pages: swap the body for the match renderer's
    `render_match_html(replay_path)` when it is available."""
    return summary_html(replay_path, back=back, night=night, static_root=static_root,
                        home=home, csp_meta=csp_meta)  # fmt: skip


def summary_html(
    replay_path: Path,
    *,
    back: str,
    night: str,
    static_root: str,
    home: str,
    csp_meta: str | None,
) -> str:
    error = None
    header = result = None
    holes: list[m.HoleScore] = []
    try:
        replay = read_replay(replay_path)
        header, result = replay.header, replay.result
        holes = [e for e in replay.events if isinstance(e, m.HoleScore)]
    except ReplayError as exc:
        error = str(exc).replace(str(replay_path), replay_path.name)
    return environment().get_template("night_match.html").render(
        header=header, result=result, holes=holes, error=error, back=back, night=night,
        match_id=replay_path.name.removesuffix(".ndjson"), static_root=static_root, home=home,
        csp_meta=csp_meta,
    )  # fmt: skip
