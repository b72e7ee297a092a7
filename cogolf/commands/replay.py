"""`cogolf replay FILE`: the scorecard of a replay, and `--verify` to re-prove it."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cogolf.commands.common import (
    add_deck_options,
    add_sandbox_options,
    load_deck_or_exit,
    with_sandbox,
)
from cogolf.logs import configure
from cogolf.replay import ReplayError, read_replay
from cogolf.scorecard import render
from cogolf.verify import VerifyError, VerifyReport, verify_file


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="print a replay's scorecard; --verify re-proves it, --explain and --html show it",
        description=(
            "Print the scorecard of a replay. With --verify, re-derive the whole file from "
            "its inputs (header, config, submissions), re-resolving every hole through the "
            "sandbox, and require every line to be exactly what the match would have "
            "written (wall-clock fields aside). Exit 1 naming the first line that differs; "
            "exit 2 for a file that is not a readable journal. --explain tells each hole "
            "(test verdicts and reasons, shots with expected vs returned, par cases failed, "
            "fallbacks); --html OUT writes the match page as one file. A golf journal is "
            "printed as its explanation (it has no other scorecard)."
        ),
    )
    p.add_argument("file", type=Path, metavar="FILE", help="a replay (.ndjson journal)")
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-resolve every hole in the sandbox and require the identical file",
    )
    p.add_argument(
        "--explain",
        action="store_true",
        help=(
            "print why each hole went as it did: each test's legality and reason, each shot "
            "held or breached (expected vs returned), par cases failed, fallbacks"
        ),
    )
    p.add_argument(
        "--html",
        type=Path,
        default=None,
        metavar="OUT",
        help="write the match page as one self-contained HTML file (opens with no server)",
    )
    add_deck_options(p)
    add_sandbox_options(p)
    p.set_defaults(func=run)


def _pages(args: argparse.Namespace, cogolf: bool) -> int:
    """--html and --explain: the match view model, as a file and as text."""
    from cogolf.pages.explain import explain  # Jinja2 and the pages load only when asked
    from cogolf.pages.render import render_standalone
    from cogolf.pages.view import PageError, deck_specs, view_from_file

    specs = deck_specs(load_deck_or_exit(args)) if cogolf else None
    try:
        view = view_from_file(args.file, specs=specs)
    except PageError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    if args.explain:
        print(explain(view))
    if args.html is not None:
        try:
            args.html.write_text(render_standalone(view), encoding="utf-8")
        except OSError as exc:
            print(f"cogolf: cannot write {args.html}: {exc.strerror}", file=sys.stderr)
            return 2
        print(f"wrote {args.html}", file=sys.stderr)
    return 0


def run(args: argparse.Namespace) -> int:
    configure("warning")
    from cogolf.pages.view import journal_game

    pages = args.explain or args.html is not None
    if pages and args.verify:
        print("cogolf: --verify cannot be combined with --explain or --html", file=sys.stderr)
        return 2
    if journal_game(args.file) == "golf":
        if args.verify:
            print(
                f"cogolf: {args.file} is a golf journal; --verify re-proves Cogolf journals",
                file=sys.stderr,
            )
            return 2
        args.explain = args.explain or args.html is None  # golf's scorecard is its explanation
        return _pages(args, cogolf=False)
    try:
        replay = read_replay(args.file)
    except ReplayError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    if pages:
        return _pages(args, cogolf=True)
    if not args.verify:
        print(render(replay))
        return 0
    deck = load_deck_or_exit(args)

    async def work(sandbox: object) -> VerifyReport | VerifyError:
        try:
            return await verify_file(args.file, deck, sandbox)  # type: ignore[arg-type]
        except VerifyError as exc:
            return exc

    outcome = with_sandbox(args, work)
    if isinstance(outcome, VerifyError):
        print(f"cogolf: NOT VERIFIED: {outcome}", file=sys.stderr)
        return 2 if outcome.malformed else 1
    # Only a proved file's scorecard is printed: its names and credits are re-derived.
    print(render(outcome.replay))
    print(
        f"\nverified: {outcome.holes_resolved} holes re-resolved; every line is what the "
        "header and the submissions re-derive"
    )
    return 0
