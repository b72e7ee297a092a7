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
from cogolf.verify import verify_replay


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "replay",
        help="print a replay's scorecard; --verify re-resolves every hole",
        description=(
            "Print the scorecard of a replay. With --verify, re-resolve every hole from the "
            "recorded submissions through the sandbox and check that every verdict, outcome, "
            "par count, hole score and the result are identical; exit 1 naming the first "
            "divergence."
        ),
    )
    p.add_argument("file", type=Path, metavar="FILE")
    p.add_argument("--verify", action="store_true")
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
    print(render(replay))
    if not args.verify:
        return 0
    deck = load_deck_or_exit(args)

    problems = with_sandbox(args, lambda sandbox: verify_replay(args.file, deck, sandbox))
    if problems:
        print(f"\nNOT VERIFIED: {problems[0]}")
        return 1
    holes = len([e for e in replay.events if e.__struct_config__.tag == "hole_score"])
    print(f"\nverified: {holes} holes re-resolved, every verdict and the result identical")
    return 0
