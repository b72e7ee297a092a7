"""`cogolf play`: a complete match between two bots, then the scorecard."""

from __future__ import annotations

import argparse
import asyncio
import sys
import time
from pathlib import Path

from cogolf.bots.policy import PolicyError, load_policy
from cogolf.commands.common import add_deck_options, add_sandbox_options, load_deck_or_exit
from cogolf.engine import rules
from cogolf.engine.match import MatchConfig
from cogolf.logs import configure
from cogolf.replay import read_replay
from cogolf.runtime.local import run_match
from cogolf.runtime.seats import InProcessSeat
from cogolf.sandbox import WeakSandboxError, make_sandbox
from cogolf.scorecard import render

DEFAULT_REPLAYS = Path("replays")


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a match between two bots and print the scorecard",
        description=(
            "Play a complete match between two bots, every program in the sandbox, "
            "write replays/<match_id>.ndjson and print the scorecard. "
            "POLICY is literalist, pedant, path/to/file.py:name or module:name."
        ),
    )
    p.add_argument("--seed", type=int, default=0, help="match seed (default 0)")
    p.add_argument("--seat0", default="literalist", metavar="POLICY", help="default: literalist")
    p.add_argument("--seat1", default="pedant", metavar="POLICY", help="default: pedant")
    p.add_argument(
        "--holes", type=int, default=rules.DEFAULT_HOLES, help="holes to play (default 9)"
    )
    p.add_argument("--hole-deadline", type=float, default=rules.HOLE_DEADLINE_SECONDS, metavar="S")
    p.add_argument(
        "--retry-deadline", type=float, default=rules.RETRY_DEADLINE_SECONDS, metavar="S"
    )
    p.add_argument("--match-id", default=None, help="default: play-<seed>-<timestamp>")
    p.add_argument("--replays", type=Path, default=DEFAULT_REPLAYS, metavar="DIR")
    add_deck_options(p)
    add_sandbox_options(p)
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure()
    deck = load_deck_or_exit(args)
    try:
        policies = [
            load_policy(args.seat0, deck_dir=args.deck),
            load_policy(args.seat1, deck_dir=args.deck),
        ]
    except PolicyError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    if not 1 <= args.holes <= len(deck.spec_keys()):
        print(f"cogolf: --holes must be between 1 and {len(deck.spec_keys())}", file=sys.stderr)
        return 2
    config = MatchConfig(
        seed=args.seed,
        holes=args.holes,
        hole_deadline_seconds=args.hole_deadline,
        retry_deadline_seconds=args.retry_deadline,
        names=(args.seat0, args.seat1),
    )
    match_id = args.match_id or f"play-{args.seed}-{time.strftime('%Y%m%d-%H%M%S')}"
    path = args.replays / f"{match_id}.ndjson"

    async def main() -> None:
        sandbox = make_sandbox(args.sandbox, accept_weak=args.accept_weak_sandbox)
        try:
            seats = [InProcessSeat(i, p) for i, p in enumerate(policies)]
            await run_match(deck, config, match_id, seats, sandbox, path, start_sandbox=True)
        finally:
            await sandbox.close()

    try:
        asyncio.run(main())
    except WeakSandboxError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 3
    print(render(read_replay(path)))
    print(f"\n  replay: {path}")
    return 0
