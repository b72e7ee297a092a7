"""`cogolf ladder`: register bots and their keys, and read or publish the standings.

Every subcommand opens the ladder's database the way `cogolf serve` does: the SQLite
file under `--data`, or `--database postgresql://...`.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "ladder",
        help="register ladder bots, rotate their keys, print or publish the standings",
        description=(
            "The ladder `cogolf serve` hosts: bots join with `cogolf bot --ladder URL "
            "--key-env VAR`. A key is printed once; only its hash is stored."
        ),
    )
    commands = p.add_subparsers(dest="ladder_command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        c = commands.add_parser(name, help=help, description=help)
        c.add_argument(
            "--data",
            type=Path,
            default=Path("replays/server"),
            metavar="DIR",
            help="the server's data folder, holding ladder.sqlite (default replays/server)",
        )
        c.add_argument(
            "--database",
            default=None,
            metavar="URL",
            help="postgresql://... instead of the SQLite file under --data",
        )
        return c

    add = command("add", "register a bot and print its key (once)")
    add.add_argument("name", help="1-64 letters, digits, '.', '_', '-'")
    add.add_argument("--owner", default=None, help="its author: bots of one owner never meet")
    rotate = command("rotate", "give a bot a new key and revoke its old ones")
    rotate.add_argument("name", help="the bot whose key is replaced")
    retire = command("retire", "retire a bot: it plays no more and keeps its history")
    retire.add_argument("name", help="the bot to retire")
    resume = command("resume", "lift a bot's pause")
    resume.add_argument("name", help="the paused bot")
    standings = command("standings", "print the ladder's standings")
    standings.add_argument("--json", action="store_true", help="print JSON")
    publish = command("publish", "write the standings and bot pages as a static site")
    publish.add_argument("--out", type=Path, required=True, metavar="SITE", help="the site folder")
    p.set_defaults(func=run)


def _table(doc: dict) -> str:
    lines = [
        f"{doc['results']} matches counted",
        f"{'#':>3}  {'bot':<24} {'rating':>7} {'95% interval':>13}  {'games':>5} "
        f"{'W':>4} {'D':>4} {'L':>4}  status",
    ]
    for r in doc["bots"]:
        if r["rating"] is None:
            rating, interval = "", "unrated"
        elif r["too_few_matches"]:
            rating, interval = f"{r['rating']:.0f}", "too few"
        else:
            rating, interval = f"{r['rating']:.0f}", f"{r['low']:.0f}-{r['high']:.0f}"
        rank = "" if r["rank"] is None else str(r["rank"])
        status = r["status"] + (f" ({r['paused_reason']})" if r["paused_reason"] else "")
        lines.append(
            f"{rank:>3}  {r['name']:<24} {rating:>7} {interval:>13}  {r['games']:>5} "
            f"{r['wins']:>4} {r['draws']:>4} {r['losses']:>4}  {status}"
        )
    return "\n".join(lines)


def run(args: argparse.Namespace) -> int:
    from cogolf.ladder import db
    from cogolf.ladder.standings import bot_page_data, standings
    from cogolf.ladder.store import LadderError, Store

    try:
        store = Store(db.connect(db.database_url(args.database, args.data)))
    except db.DatabaseError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    try:
        match args.ladder_command:
            case "add":
                key = store.add_bot(args.name, args.owner)
                print(f"bot {args.name} registered; its key (shown once, keep it secret):")
                print(key)
            case "rotate":
                key = store.rotate(args.name)
                print(f"bot {args.name}: new key (every earlier key is revoked):")
                print(key)
            case "retire":
                store.retire(args.name)
                print(f"bot {args.name} retired; its history stays")
            case "resume":
                store.unpause(args.name)
                print(f"bot {args.name}: pause lifted")
            case "standings":
                doc = standings(store)
                print(json.dumps(doc, indent=1) if args.json else _table(doc))
            case "publish":
                from cogolf.ladder.pages import PublishError, publish

                doc = standings(store)
                bots = [bot_page_data(store, r["name"], doc) for r in doc["bots"]]
                try:
                    files = publish(doc, [b for b in bots if b is not None], args.out)
                except PublishError as exc:
                    print(f"cogolf: {exc}", file=sys.stderr)
                    return 2
                print(f"published {len(doc['bots'])} bots ({files} files) to {args.out}")
    except LadderError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    finally:
        store.engine.dispose()
    return 0
