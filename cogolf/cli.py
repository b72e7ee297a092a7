"""The one `cogolf` command. Each subcommand lives with the code it drives and
registers itself here through a `register(subparsers)` function.

Only the module of the subcommand being run is imported: `cogolf --help` lists the
subcommands from the table below, and a `cogolf bot` process pays for the bot's
imports alone, never for the server, the league or the games it does not play.
Options every subcommand shares (`--log-level`) are accepted before or after it.
"""

from __future__ import annotations

import argparse
import importlib
import os
import sys
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

LOG_LEVELS = ("debug", "info", "warning", "error")


@dataclass(frozen=True)
class Command:
    module: str
    help: str  # the same line the module's register() gives (a test keeps them equal)


# In the order `cogolf --help` lists them.
COMMANDS: dict[str, Command] = {
    "play": Command(
        "cogolf.commands.play", "play a match between two bots and print the scorecard"
    ),
    "serve": Command("cogolf.commands.serve", "run the websocket server"),
    "bot": Command("cogolf.commands.bot", "play a seat of a live match with a policy"),
    "replay": Command(
        "cogolf.commands.replay",
        "print a replay's scorecard; --verify re-proves it, --explain and --html show it",
    ),
    "schema": Command(
        "cogolf.commands.schema", "print the JSON Schema of every wire message and replay record"
    ),
    "deck": Command("cogolf.commands.deck", "work with deck packs"),
    "league": Command("cogolf.commands.league", "run a league night and compute its standings"),
    "golf": Command(
        "cogolf.commands.golf", "code golf as a solo game: 18 holes in python, racket and rust"
    ),
    "commit0": Command(
        "cogolf.commands.commit0", "Commit-0: implement a whole library from its stubs"
    ),
    "project": Command(
        "cogolf.commands.project",
        "project attempts: harden a workspace, scored by hidden evaluator checks",
    ),
    "agent": Command(
        "cogolf.commands.agent",
        "coding agents play Commit-0 and project tasks, walled, through a model gateway",
    ),
    "ladder": Command(
        "cogolf.commands.ladder",
        "register ladder bots, rotate their keys, print or publish the standings",
    ),
    "bench": Command("cogolf.commands.bench", "benchmarks that print numbers"),
    "doctor": Command("cogolf.commands.doctor", "check each sandbox wall on this machine"),
}


class _Version(argparse.Action):
    """`--version`, reading the installed version only when asked."""

    def __init__(self, option_strings: Sequence[str], dest: str, **kwargs: Any) -> None:
        super().__init__(option_strings, dest, nargs=0, default=argparse.SUPPRESS, **kwargs)

    def __call__(self, parser: argparse.ArgumentParser, *_: Any) -> None:
        from importlib.metadata import PackageNotFoundError, version

        from cogolf import GAME_VERSION, PROTOCOL

        try:
            installed = version("cogolf")
        except PackageNotFoundError:
            installed = GAME_VERSION
        print(f"cogolf {installed} (game {GAME_VERSION}, protocol {PROTOCOL})")
        parser.exit()


def add_log_level(parser: argparse.ArgumentParser, default: Any = argparse.SUPPRESS) -> None:
    """`--log-level`; below the top level it defaults to SUPPRESS so a value given
    before the subcommand is not overwritten by the subcommand's default."""
    parser.add_argument(
        "--log-level",
        choices=LOG_LEVELS,
        default=default,
        help="logs go to stderr at this level and above (default: each command's own: "
        "warning, info for serve, bot and deck check)",
    )


def _walk(parser: argparse.ArgumentParser) -> list[argparse.ArgumentParser]:
    """`parser` and every parser below it."""
    found = [parser]
    for action in parser._actions:
        if isinstance(action, argparse._SubParsersAction):
            for child in dict.fromkeys(action.choices.values()):
                found += _walk(child)
    return found


def _chosen(argv: Sequence[str]) -> str | None:
    """The subcommand named in `argv` (skipping the top-level options), if any."""
    args = iter(argv)
    for arg in args:
        if arg == "--log-level":
            next(args, None)
        elif arg == "--":
            return next(args, None)
        elif not arg.startswith("-"):
            return arg
    return None


def build_parser(
    argv: Sequence[str] | None = None, *, full: bool = False
) -> argparse.ArgumentParser:
    """The parser; only the subcommand named in `argv` is registered in full (every
    one with `full`), the others only by name and help line."""
    parser = argparse.ArgumentParser(
        prog="cogolf",
        description="Cogolf: code agents play nine-hole matches of ambiguous specs.",
    )
    parser.add_argument("--version", action=_Version, help="print the version and exit")
    add_log_level(parser, default=None)
    sub = parser.add_subparsers(dest="command", metavar="COMMAND", required=True)
    chosen = None if full else _chosen(sys.argv[1:] if argv is None else argv)
    for name, command in COMMANDS.items():
        if full or name == chosen:
            importlib.import_module(command.module).register(sub)
        else:
            sub.add_parser(name, help=command.help, add_help=False)
    for child in _walk(parser)[1:]:
        if "--log-level" not in child._option_string_actions:
            add_log_level(child)
    return parser


def _quiet_broken_pipe() -> int:
    """The reader went away (`cogolf ... | head`): stop quietly, as a shell tool does.
    Python would still flush stdout at exit and fail again, so point it at /dev/null."""
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, sys.stdout.fileno())
    return 141  # what a shell reports for a command ended by SIGPIPE


def main(argv: Sequence[str] | None = None) -> int:
    parser = build_parser(argv)
    args = parser.parse_args(argv)
    from cogolf.logs import set_level_override

    set_level_override(args.log_level)
    if args.log_level is None:
        args.log_level = "warning"  # for commands that pass it on as their level
    try:
        code = int(args.func(args) or 0)
        sys.stdout.flush()
        return code
    except BrokenPipeError:
        return _quiet_broken_pipe()
    except KeyboardInterrupt:
        print("interrupted", file=sys.stderr)
        return 130
