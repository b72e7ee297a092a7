"""`cogolf bot`: connect a policy to a server seat and play the match."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from cogolf.bots.client import BotRuntime
from cogolf.bots.policy import PolicyError, load_policy
from cogolf.logs import configure


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "bot",
        help="play a seat of a live match with a policy",
        description=(
            "Connect to a seat URL (ws://.../player?slot=N&token=T), answer every observation "
            "with POLICY (literalist, pedant, path/to/file.py:name or module:name), reconnect "
            "after drops, and exit 0 when the match is done. A policy that raises, hangs or "
            "returns junk is replaced by the literalist for that hole."
        ),
    )
    p.add_argument(
        "--url", default=os.environ.get("COGOLF_URL"), help="seat URL (default: $COGOLF_URL)"
    )
    p.add_argument("--policy", default="literalist", metavar="POLICY")
    p.add_argument(
        "--deck",
        type=Path,
        default=None,
        metavar="DIR",
        help="public deck for the scripted baselines (default: the core pack)",
    )
    p.add_argument(
        "--seats-from-stdin",
        action="store_true",
        help="play many seats at once: one seat URL per line of standard input (a league "
        "night's pooled bot); exit when the input closes and every seat is done",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure()
    if args.seats_from_stdin:
        from cogolf.bots.pool import play_seats

        try:
            load_policy(args.policy, deck_dir=args.deck)  # a policy that cannot load: say so now
        except PolicyError as exc:
            print(f"cogolf: {exc}", file=sys.stderr)
            return 2
        return asyncio.run(play_seats(args.policy, args.deck))
    if not args.url:
        print("cogolf: --url (or COGOLF_URL) is required", file=sys.stderr)
        return 2
    try:
        policy = load_policy(args.policy, deck_dir=args.deck)
    except PolicyError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(BotRuntime(args.url, policy, deck_dir=args.deck).run())
    except KeyboardInterrupt:
        return 130
