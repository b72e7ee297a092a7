"""`cogolf deck check`: validate a pack (caps, then the code-running checks)."""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

from cogolf.commands.common import add_sandbox_options, with_sandbox
from cogolf.deck import DEFAULT_REFERENCES, DeckError, load
from cogolf.deck_check import check_deck
from cogolf.logs import configure


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("deck", help="work with deck packs", description="Work with deck packs.")
    dsub = p.add_subparsers(dest="deck_command", metavar="ACTION", required=True)
    c = dsub.add_parser(
        "check",
        help="validate a pack",
        description=(
            "Validate a pack: caps and structure, then (through the sandbox) that examples and "
            "par cases agree with the reference, the literalist's tests are all legal, each "
            "baseline fails a par case, and the baselines breach each other."
        ),
    )
    c.add_argument(
        "dir",
        nargs="?",
        type=Path,
        default=None,
        metavar="DIR",
        help="the public deck directory (default: deck/core)",
    )
    c.add_argument(
        "--references",
        type=Path,
        default=None,
        metavar="DIR",
        help="the references directory (default: references/<pack> beside deck/)",
    )
    add_sandbox_options(c)
    c.set_defaults(func=run_check)


def _references_for(deck_dir: Path) -> Path:
    return deck_dir.resolve().parent.parent / "references" / deck_dir.resolve().name


def run_check(args: argparse.Namespace) -> int:
    configure()
    deck_dir = args.dir
    refs = args.references or (_references_for(deck_dir) if deck_dir else DEFAULT_REFERENCES)
    try:
        deck = load(deck_dir, refs) if deck_dir else load(references_dir=refs)
    except DeckError as exc:
        print(f"FAIL {exc}", file=sys.stderr)
        return 1

    problems = with_sandbox(args, lambda sandbox: check_deck(deck, sandbox))
    for p in problems:
        print(f"FAIL {p}")
    status = "ok" if not problems else f"{len(problems)} problem(s)"
    specs = len(deck.spec_keys())
    print(f"deck {deck.name} {deck.version}: {specs} specs, {status}, digest {deck.digest}")
    return 0 if not problems else 1
