"""Options and set-up shared by several subcommands (deck selection, sandbox mode)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from pathlib import Path
from typing import Any, TypeVar

from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES, Deck, DeckError, load
from cogolf.sandbox import WeakSandboxError, make_sandbox
from cogolf.sandbox.api import Sandbox

T = TypeVar("T")


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


def with_sandbox(args: argparse.Namespace, work: Callable[[Sandbox], Awaitable[T]]) -> T:
    """Run `work` with a started sandbox of the mode the options ask for, then close it.

    A machine whose sandbox would be weaker than required ends the command with
    exit status 3 and the reason, unless --accept-weak-sandbox was given.
    """

    async def main() -> T:
        sandbox = make_sandbox(args.sandbox, accept_weak=args.accept_weak_sandbox)
        await sandbox.start()
        try:
            return await work(sandbox)
        finally:
            await sandbox.close()

    try:
        return asyncio.run(main())
    except WeakSandboxError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        raise SystemExit(3) from None


def add_table_parser(
    sub: argparse._SubParsersAction, help: str, func: Callable[[argparse.Namespace], int]
) -> None:
    """`... table RESULTS_DIR [--json]`: an offline game's table from its result files."""
    table = sub.add_parser("table", help=help)
    table.add_argument("folder", type=Path, metavar="RESULTS_DIR")
    table.add_argument("--json", action="store_true", help="print the rows as JSON")
    table.set_defaults(func=func)


def emit_result(doc: dict[str, Any], out: Path | None) -> int:
    """Print a result document (JSON) and, with `out`, also write it there."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0
