"""`cogolf deck check`: validate a pack (caps, then the code-running checks)."""

from __future__ import annotations

import argparse
import asyncio
import sys
from pathlib import Path

from cogolf.deck import DEFAULT_REFERENCES, DeckError, load
from cogolf.deck_check import check_deck
from cogolf.logs import configure
from cogolf.sandbox import WeakSandboxError, make_sandbox


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
    c.add_argument("--sandbox", choices=("fork", "spawn"), default="fork")
    c.add_argument("--accept-weak-sandbox", action="store_true")
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

    async def main() -> list:
        sandbox = make_sandbox(args.sandbox, accept_weak=args.accept_weak_sandbox)
        await sandbox.start()
        try:
            return await check_deck(deck, sandbox)
        finally:
            await sandbox.close()

    try:
        problems = asyncio.run(main())
    except WeakSandboxError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 3
    for p in problems:
        print(f"FAIL {p}")
    status = "ok" if not problems else f"{len(problems)} problem(s)"
    specs = len(deck.spec_keys())
    print(f"deck {deck.name} {deck.version}: {specs} specs, {status}, digest {deck.digest}")
    return 0 if not problems else 1
