"""Options and set-up shared by several subcommands (deck selection, sandbox mode)."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable, Sequence
from pathlib import Path
from typing import Any, TypeVar

from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES, Deck, DeckError, load
from cogolf.sandbox import MODES, WeakSandboxError, make_sandbox
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


def add_sandbox_options(
    parser: argparse.ArgumentParser, *, several: bool = False, weak: bool = True
) -> None:
    """`--sandbox {fork,spawn}` and `--accept-weak-sandbox`, the same everywhere.

    With `several` (the commands that compare modes), `--sandbox` may be repeated
    and defaults to every mode; read the modes with `sandbox_modes(args)`. `weak`
    False leaves out `--accept-weak-sandbox` (for a command that only looks).
    """
    if several:
        parser.add_argument(
            "--sandbox",
            action="append",
            type=_mode_or_both,
            default=None,
            metavar="{fork,spawn}",
            help="sandbox mode to use; repeat it for both (default: both "
            f"{' and '.join(MODES)})",
        )
    else:
        parser.add_argument(
            "--sandbox",
            choices=MODES,
            default="fork",
            help="fork: a fork server started once (fast); spawn: a fresh interpreter per "
            "batch (default: fork)",
        )
    if weak:
        parser.add_argument(
            "--accept-weak-sandbox",
            action="store_true",
            help="run even when a kernel wall is missing on this machine (not for real matches)",
        )


def _mode_or_both(value: str) -> str:
    if value == "both":  # the old `doctor --sandbox both`
        print("cogolf: --sandbox both is deprecated: give --sandbox twice or leave it out",
              file=sys.stderr)
        return value
    if value not in MODES:
        raise argparse.ArgumentTypeError(
            f"unknown mode {value!r} (choose from {', '.join(MODES)})"
        )
    return value


def sandbox_modes(args: argparse.Namespace) -> list[str]:
    """The modes a several-mode command was asked for, in order, each once."""
    given: list[str] = list(args.sandbox or [])
    if getattr(args, "modes", None) is not None:  # the old `bench sandbox --modes a,b`
        print("cogolf: --modes is deprecated: use --sandbox MODE (repeated)", file=sys.stderr)
        try:
            given += [_mode_or_both(m.strip()) for m in args.modes.split(",") if m.strip()]
        except argparse.ArgumentTypeError as exc:
            print(f"cogolf: --modes: {exc}", file=sys.stderr)
            raise SystemExit(2) from None
    if not given or "both" in given:
        return list(MODES)
    return list(dict.fromkeys(given))


def add_json_option(parser: argparse.ArgumentParser, what: str = "one JSON document") -> None:
    parser.add_argument("--json", action="store_true", help=f"print {what} instead of text")


def add_result_out_option(parser: argparse.ArgumentParser) -> None:
    """`--out FILE` of the commands that print a result document (see `emit_result`)."""
    parser.add_argument(
        "--out", type=Path, metavar="FILE", help="also write the result JSON to this file"
    )


def add_table_options(parser: argparse.ArgumentParser) -> None:
    """A table command's output: aligned columns, or `--tsv`, or `--json`."""
    form = parser.add_mutually_exclusive_group()
    form.add_argument("--json", action="store_true", help="print the rows as JSON")
    form.add_argument(
        "--tsv", action="store_true", help="print tab-separated values, a header line first"
    )


def add_replays_option(parser: argparse.ArgumentParser, default: Path = Path("replays")) -> None:
    parser.add_argument(
        "--replays",
        type=Path,
        default=default,
        metavar="DIR",
        help=f"where replays (journals) are written (default: {default})",
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
    """`... table RESULTS_DIR [--json | --tsv]`: an offline game's table from its result files."""
    table = sub.add_parser("table", help=help, description=help)
    table.add_argument(
        "folder", type=Path, metavar="RESULTS_DIR", help="the folder of result files (JSON)"
    )
    add_table_options(table)
    table.set_defaults(func=func)


def print_table(
    args: argparse.Namespace, header: Sequence[str], rows: Sequence[Sequence[str]], left: int = 1
) -> None:
    """Rows as aligned columns (the first `left` left-aligned), or as TSV with --tsv.
    Cells come from result files, which anyone may write: no control character, tab
    or newline of theirs reaches the terminal or breaks a row."""
    from cogolf.grid import grid
    from cogolf.text import clean

    def cell(text: str) -> str:
        return clean(text).replace("\t", " ").replace("\n", " ")

    header = [cell(c) for c in header]
    rows = [[cell(c) for c in r] for r in rows]
    if getattr(args, "tsv", False):
        print("\n".join("\t".join(cells) for cells in (header, *rows)))
    else:
        print("\n".join(grid(header, rows, left=left)))


def emit_result(doc: dict[str, Any], out: Path | None) -> int:
    """Print a result document (JSON) and, with `out`, also write it there."""
    text = json.dumps(doc, indent=2, ensure_ascii=False)
    if out is not None:
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(text + "\n", encoding="utf-8")
    print(text)
    return 0
