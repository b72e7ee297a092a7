"""Options and set-up shared by several subcommands (deck selection, sandbox mode)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES, Deck, DeckError, load


def add_deck_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--deck",
        type=Path,
        default=DEFAULT_DECK,
        metavar="DIR",
        help="public half of the pack (default: the core pack)",
    )
    parser.add_argument(
        "--references",
        type=Path,
        default=DEFAULT_REFERENCES,
        metavar="DIR",
        help="hidden half of the pack (default: the core pack's references)",
    )


def add_sandbox_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--sandbox",
        choices=("fork", "spawn"),
        default="fork",
        help="fork: a fork server started once (fast); spawn: a fresh interpreter per batch",
    )
    parser.add_argument(
        "--accept-weak-sandbox",
        action="store_true",
        help="run even when a kernel wall is missing on this machine (not for real matches)",
    )


def load_deck_or_exit(args: argparse.Namespace) -> Deck:
    try:
        return load(args.deck, args.references)
    except DeckError as exc:
        print(f"cogolf: deck error: {exc}", file=sys.stderr)
        raise SystemExit(2) from None
