"""`cogolf bot`: connect a policy to a server seat and play the match."""

from __future__ import annotations

import argparse
import asyncio
import os
import sys
from pathlib import Path

from cogolf.bots.client import BotRuntime
from cogolf.bots.policy import LLM_PREFIX, PolicyError, load_policy
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
    p.add_argument(
        "--policy",
        default="literalist",
        metavar="POLICY",
        help="literalist, pedant, path/to/file.py:name or module:name (default literalist)",
    )
    p.add_argument(
        "--llm",
        type=Path,
        default=None,
        metavar="CONFIG.toml",
        help="play with a chat model (same as --policy llm:CONFIG.toml; needs cogolf[llm])",
    )
    p.add_argument(
        "--transcripts",
        type=Path,
        default=None,
        metavar="DIR",
        help="where an LLM player writes its transcript (<match_id>.seat<slot>.ndjson)",
    )
    p.add_argument(
        "--deck",
        type=Path,
        default=None,
        metavar="DIR",
        help="public deck for the scripted baselines (default: the core pack)",
    )
    p.add_argument(
        "--check",
        action="store_true",
        help="only load the policy and exit: 0 when it loads, 2 with the reason (a league "
        "night checks policy files this way, walled, before it starts)",
    )
    p.add_argument(
        "--seats-from-stdin",
        action="store_true",
        help="play many seats at once: one seat URL per line of standard input (a league "
        "night's pooled bot); exit when the input closes and every seat is done",
    )
    p.add_argument(
        "--ladder",
        default=None,
        metavar="URL",
        help="play a ladder's matches all day: the server's address (ws://HOST:PORT); "
        "the key is read from --key-env and sent as a header, never in the URL",
    )
    p.add_argument(
        "--key-env",
        default="COGOLF_LADDER_KEY",
        metavar="VAR",
        help="--ladder: the environment variable holding the bot's key "
        "(default COGOLF_LADDER_KEY)",
    )
    p.add_argument(
        "--concurrent",
        type=int,
        default=1,
        metavar="N",
        help="--ladder: matches played at once (1 to 16, default 1)",
    )
    p.add_argument(
        "--matches",
        type=int,
        default=None,
        metavar="N",
        help="--ladder: leave after N seats, once they are played (default: play on)",
    )
    p.set_defaults(func=run)


def run(args: argparse.Namespace) -> int:
    configure()
    if args.check:
        ref = f"{LLM_PREFIX}{args.llm}" if args.llm is not None else args.policy
        try:
            load_policy(ref, deck_dir=args.deck)
        except PolicyError as exc:
            print(f"cogolf: {exc}", file=sys.stderr)
            return 2
        return 0
    if args.ladder is not None:
        from cogolf.ladder.client import run_ladder_bot

        return run_ladder_bot(args)
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
    ref = f"{LLM_PREFIX}{args.llm}" if args.llm is not None else args.policy
    try:
        policy = load_policy(ref, deck_dir=args.deck)
    except PolicyError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    warm = getattr(policy, "warm", None)
    if warm is not None:
        try:
            warm()  # an LLM player's client is built before the first deadline runs
        except ImportError as exc:
            missing = exc.name or exc
            print(f"cogolf: {missing}: install cogolf[llm] for LLM players", file=sys.stderr)
            return 2
    runtime = BotRuntime(args.url, policy, deck_dir=args.deck, transcripts=args.transcripts)
    try:
        return asyncio.run(runtime.run())
    except KeyboardInterrupt:
        return 130
