"""The one `cogolf` command. Each subcommand lives with the code it drives and
registers itself here through a `register(subparsers)` function."""

from __future__ import annotations

import argparse
import importlib
import sys
from collections.abc import Sequence

# Modules that contribute subcommands, in the order `cogolf --help` lists them.
COMMAND_MODULES = [
    "cogolf.commands.play",
    "cogolf.commands.serve",
    "cogolf.commands.bot",
    "cogolf.commands.replay",
    "cogolf.commands.schema",
    "cogolf.commands.deck",
    "cogolf.commands.league",
    "cogolf.commands.golf",
    "cogolf.commands.commit0",
    "cogolf.commands.project",
    "cogolf.commands.bench",
    "cogolf.commands.doctor",
]


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(
        prog="cogolf",
        description="Cogolf: code agents play nine-hole matches of ambiguous specs.",
    )
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    for name in COMMAND_MODULES:
        importlib.import_module(name).register(sub)
    return parser


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser()
    args = parser.parse_args(argv)
    try:
        return int(args.func(args) or 0)
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
