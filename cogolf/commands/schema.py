"""`cogolf schema`: the JSON Schema of every message, for bot authors."""

from __future__ import annotations

import argparse
import json

import msgspec

from cogolf import messages as m
from cogolf.games.golf import wire as golf


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
    return {
        "seat_to_server": msgspec.json.schema(m.Submission),
        "server_to_seat": msgspec.json.schema(m.ServerToSeat),
        "server_to_spectator": msgspec.json.schema(m.ServerToWatcher),
        "replay_record": msgspec.json.schema(m.ReplayRecord),
        "golf": {
            "seat_to_server": msgspec.json.schema(golf.GolfSubmission),
            "server_to_seat": msgspec.json.schema(
                golf.GolfWelcome | golf.GolfObservation | m.Ack | m.Error | golf.GolfDone
            ),
            "replay_record": msgspec.json.schema(golf.GolfRecord),
        },
    }


def run(args: argparse.Namespace) -> int:
    print(json.dumps(schemas(), indent=2, sort_keys=True))
    return 0
