"""`cogolf serve`: one server, many live matches, resumable from its data directory."""

from __future__ import annotations

import argparse
import asyncio
import math
import os
import signal
import sys
import tomllib
from pathlib import Path

import msgspec

from cogolf.commands.common import add_deck_options, add_sandbox_options, load_deck_or_exit
from cogolf.games.registry import LIVE
from cogolf.logs import configure
from cogolf.sandbox import WeakSandboxError
from cogolf.server.requests import CreateMatch, RequestError
from cogolf.server.run import ListenError, RunningServer, ServeOptions, start_server


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "serve",
        help="run the websocket server",
        description=(
            "Run the Cogolf server: POST /matches creates a match, bots connect to "
            "/matches/{id}/player?slot=N&token=T, spectators to /matches/{id}/watch. "
            "Unfinished matches found in --data resume at their first unresolved hole."
        ),
    )
    p.add_argument("--host", default="127.0.0.1", help="address to listen on (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8080, help="0 picks a free port")
    p.add_argument(
        "--data",
        type=Path,
        default=Path("replays/server"),
        metavar="DIR",
        help="where matches and their journals live (default replays/server)",
    )
    p.add_argument(
        "--admin-token",
        default=os.environ.get("COGOLF_ADMIN_TOKEN"),
        help="require 'Authorization: Bearer TOKEN' to create matches "
        "(default: $COGOLF_ADMIN_TOKEN)",
    )
    p.add_argument(
        "--connect-timeout",
        type=float,
        default=30.0,
        metavar="S",
        help="seconds, counted from a match's creation, to wait for both seats; then the "
        "match starts and the fallback plays a seat still absent; a bot connecting after "
        "the match has ended is refused with 410 (default 30)",
    )
    p.add_argument(
        "--max-connections",
        type=int,
        default=1000,
        metavar="N",
        help="open connections at most (lowered to what the descriptor limit allows, "
        "keeping a reserve for the sandbox)",
    )
    p.add_argument(
        "--max-connections-per-address",
        type=int,
        default=256,
        metavar="N",
        help="open connections at most from one client address",
    )
    p.add_argument(
        "--header-timeout",
        type=float,
        default=10.0,
        metavar="S",
        help="seconds a new connection has to send its request headers",
    )
    p.add_argument(
        "--single",
        action="store_true",
        help="host one match, also answered at /player?slot=N&token=T",
    )
    p.add_argument(
        "--config",
        type=Path,
        metavar="FILE",
        help="TOML file with the --single match: seed, holes, deadlines, names, tokens",
    )
    p.add_argument("--seed", type=int, help="--single: match seed")
    p.add_argument("--holes", type=int, help="--single: holes to play")
    p.add_argument(
        "--token",
        action="append",
        metavar="TOKEN",
        help="--single: seat tokens (give twice); printed when generated",
    )
    p.add_argument("--match-id", help="--single: match id (default: generated)")
    p.add_argument(
        "--league-dir",
        type=Path,
        default=Path("league"),
        metavar="DIR",
        help="league nights shown at /nights/NAME: DIR/NAME/standings.json (default: league)",
    )
    p.add_argument(
        "--league-replays",
        type=Path,
        default=Path("replays"),
        metavar="DIR",
        help="their replays, solo results and progress: DIR/NAME/ (default: replays)",
    )
    p.add_argument(
        "--database",
        default=None,
        metavar="URL",
        help="the ladder's database: postgresql://USER@HOST/DB to share one ladder between "
        "servers (default: SQLite in DATA/ladder.sqlite)",
    )
    p.add_argument(
        "--public-url",
        default=None,
        metavar="URL",
        help="where bots reach this server (http://HOST:PORT), put in the seats it hands "
        "out (default: the address it listens on)",
    )
    p.add_argument(
        "--ladder-holes", type=int, default=None, metavar="N", help="holes of a ladder match"
    )
    p.add_argument(
        "--ladder-hole-deadline",
        type=float,
        default=None,
        metavar="S",
        help="seconds per hole in ladder matches (the retry gets --ladder-retry-deadline)",
    )
    p.add_argument(
        "--ladder-retry-deadline",
        type=float,
        default=None,
        metavar="S",
        help="seconds for a retry in ladder matches",
    )
    p.add_argument(
        "--ladder-orphan-seconds",
        type=float,
        default=None,
        metavar="S",
        help="seconds another server sharing the ladder may stay silent before its "
        "unfinished matches are voided; at least the 15 s after which its bots count as "
        "gone (default 60)",
    )
    p.add_argument(
        "--no-ladder",
        action="store_true",
        help="serve matches only: no /ladder, no ladder database",
    )
    add_deck_options(p)
    add_sandbox_options(p)
    p.set_defaults(func=run)


def _single_request(args: argparse.Namespace) -> CreateMatch:
    doc: dict = {}
    if args.config is not None:
        try:
            doc = tomllib.loads(args.config.read_text(encoding="utf-8"))
        except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
            raise RequestError(f"{args.config}: {exc}") from None
    for key, value in (
        ("seed", args.seed),
        ("holes", args.holes),
        ("tokens", args.token),
        ("match_id", args.match_id),
    ):
        if value is not None:
            doc[key] = value
    doc.setdefault("match_id", "single")
    try:
        return msgspec.convert(doc, CreateMatch)
    except msgspec.ValidationError as exc:
        raise RequestError(f"{args.config or 'options'}: {exc}") from None


def _orphan_problem(value: float | None) -> str | None:
    """Why --ladder-orphan-seconds is refused, if it is: a server silent for less than
    the stale time may only be restarting, its bots still counted as there."""
    if value is None:
        return None
    from cogolf.ladder.store import STALE_SECONDS  # the database layer, only when asked

    if math.isfinite(value) and value >= STALE_SECONDS:
        return None
    return (
        f"--ladder-orphan-seconds must be a finite number of seconds, at least the stale "
        f"time, {STALE_SECONDS:g} s (got {value!r})"
    )


def run(args: argparse.Namespace) -> int:
    configure()
    deck = load_deck_or_exit(args)
    if args.max_connections < 1 or args.max_connections_per_address < 1:
        print(
            "cogolf: --max-connections and --max-connections-per-address must be >= 1",
            file=sys.stderr,
        )
        return 2
    if not 0 < args.header_timeout <= 3600:
        print("cogolf: --header-timeout must be between 0 and 3600 seconds", file=sys.stderr)
        return 2
    if problem := _orphan_problem(args.ladder_orphan_seconds):
        print(f"cogolf: {problem}", file=sys.stderr)
        return 2
    try:
        single = _single_request(args) if args.single else None
    except RequestError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    # Jinja2 is loaded only by the commands that serve pages
    from cogolf.pages.nights import NightFolders
    from cogolf.pages.routes import Site

    addons = []
    if not args.single and not args.no_ladder:
        from cogolf.ladder.db import DatabaseError
        from cogolf.ladder.pages import LadderPages
        from cogolf.ladder.service import MatchSettings, open_ladder
        from cogolf.ladder.store import ORPHAN_SECONDS

        try:
            addons.append(
                open_ladder(
                    args.data,
                    args.database,
                    admin_token=args.admin_token,
                    public_url=args.public_url,
                    settings=MatchSettings(
                        holes=args.ladder_holes,
                        hole_deadline=args.ladder_hole_deadline,
                        retry_deadline=args.ladder_retry_deadline,
                    ),
                    pages=LadderPages(),
                    orphan=(
                        ORPHAN_SECONDS
                        if args.ladder_orphan_seconds is None
                        else args.ladder_orphan_seconds
                    ),
                )
            )
        except DatabaseError as exc:
            print(f"cogolf: {exc}", file=sys.stderr)
            return 2
    options = ServeOptions(
        addons=addons,
        games=LIVE,
        data_dir=args.data,
        decks={deck.name: deck},
        host=args.host,
        port=args.port,
        admin_token=args.admin_token,
        sandbox_mode=args.sandbox,
        accept_weak_sandbox=args.accept_weak_sandbox,
        connect_timeout=args.connect_timeout,
        single=single,
        max_connections=args.max_connections,
        max_connections_per_address=args.max_connections_per_address,
        header_timeout=args.header_timeout,
        pages=Site(nights=NightFolders(args.league_dir, args.league_replays)),
    )

    running: list[RunningServer] = []

    def on_signal(signum: int, frame: object) -> None:
        # While uvicorn serves, it handles the signal itself and raises it again once it
        # has shut down; landing here then (or before it started) ends the server, so
        # `stop` still closes every match, journal and the sandbox.
        if not running:
            raise KeyboardInterrupt
        running[0].request_exit()

    for sig in (signal.SIGTERM, signal.SIGINT):
        signal.signal(sig, on_signal)

    async def main() -> None:
        server = await start_server(options)
        running.append(server)
        print(f"cogolf serve: listening on {server.url}", flush=True)
        if server.single is not None:
            base = server.ws_url
            for slot, token in enumerate(server.single_tokens):
                print(f"  seat {slot}: {base}/player?slot={slot}&token={token}", flush=True)
        try:
            await server.wait()
        finally:
            await server.stop()

    try:
        asyncio.run(main())
    except WeakSandboxError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 3
    except (RequestError, ListenError) as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    except KeyboardInterrupt:
        return 0
    return 0
