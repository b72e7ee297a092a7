"""`cogolf schema`: the JSON Schema of every message, for bot authors."""

from __future__ import annotations

import argparse
import json

from cogolf.games.registry import LIVE


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "schema",
        help="print the JSON Schema of every wire message and replay record",
        description="Print the JSON Schema (from the message types) of what a bot sends and "
        "receives, what spectators receive, and every replay record, for Cogolf matches and "
        "for live golf matches.",
    )
    p.set_defaults(func=run)


def schemas() -> dict:
    """Cogolf's schemas at the top level (as always), every other game's under its name."""
    docs = {name: game.schemas() for name, game in LIVE.items()}
    return {**docs.pop("cogolf"), **docs}


def run(args: argparse.Namespace) -> int:
    print(json.dumps(schemas(), indent=2, sort_keys=True))
    return 0
