"""`cogolf league publish NIGHT_DIR --out SITE/`: a night as a static web site."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path


def register_publish(lsub: argparse._SubParsersAction) -> None:
    p = lsub.add_parser(
        "publish",
        help="write a night as a static web site (standings, tables, every match page)",
        description=(
            "Write NIGHT_DIR (a night's replay folder, e.g. replays/example/) and its "
            "standings (LEAGUE/<night>/standings.json) as a static site in SITE: index.html "
            "with the standings, head-to-head heat map, game tables and every match, "
            "matches/<match_id>.html per replay, standings.json and static/. The pages hold "
            "no script and link relatively, so any static host, or a browser opening the "
            "folder from disk, shows them. SITE must be empty or an earlier publish."
        ),
    )
    p.add_argument("night_dir", type=Path, metavar="NIGHT_DIR", help="e.g. replays/example/")
    p.add_argument("--out", type=Path, required=True, metavar="SITE", help="the site's folder")
    p.add_argument(
        "--league-dir",
        type=Path,
        default=None,
        metavar="DIR",
        help="where the night's standings are (default: where `league run` or `league "
        "standings` last wrote them, as the night remembers, else league/ beside replays/)",
    )
    p.set_defaults(func=publish_command)


def publish_command(args: argparse.Namespace) -> int:
    from cogolf.league.publish import league_dir_of
    from cogolf.pages.nights_publish import PublishError, publish

    league_dir = args.league_dir or league_dir_of(args.night_dir) or Path("league")
    try:
        done = publish(args.night_dir, args.out, league_dir)
    except PublishError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    except OSError as exc:
        print(f"cogolf: cannot write the site: {exc}", file=sys.stderr)
        return 2
    print(f"published {done.matches} match pages and {done.index}")
    return 0
