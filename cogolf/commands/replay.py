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
        help="print a replay's scorecard; --verify re-derives the whole file",
        description=(
            "Print the scorecard of a replay. With --verify, re-derive the whole file from "
            "its inputs (header, config, submissions), re-resolving every hole through the "
            "sandbox, and require every line to be exactly what the match would have "
            "written (wall-clock fields aside). Exit 1 naming the first line that differs; "
            "exit 2 for a file that is not a readable journal."
        ),
    )
    p.add_argument("file", type=Path, metavar="FILE", help="a replay (.ndjson journal)")
    p.add_argument(
        "--verify",
        action="store_true",
        help="re-resolve every hole in the sandbox and require the identical file",
    )
    add_deck_options(p)
    add_sandbox_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure("warning")
    try:
        replay = read_replay(args.file)
    except ReplayError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
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
