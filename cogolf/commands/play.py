"""`cogolf play`: a complete match between two bots, then the scorecard.

By default the match is played the way every live match is: a server on an
ephemeral loopback port and one bot process per seat over websockets.
`--in-process` plays the policies inside this process instead (faster, same
rules). `--from FILE` replays a match's seed, deck check and config.

A replay is data written by whoever created the match, so `--from` never loads
the names recorded in it as policies: the bots come from `--seat0/--seat1`, and
a seat left unset keeps its recorded bot only when that is a built-in baseline.
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable
from pathlib import Path

import msgspec

from cogolf.bots.policy import PolicyError, builtin_names, load_policy, seat_name
from cogolf.commands.common import (
    add_deck_options,
    add_replays_option,
    add_sandbox_options,
    load_deck_or_exit,
)
from cogolf.deadlines import MAX_DEADLINE, MAX_MATCH_DEADLINE, MIN_DEADLINE
from cogolf.deck import Deck
from cogolf.engine import rules
from cogolf.engine.match import MatchConfig
from cogolf.fallback_notes import FallbackNotes, follow
from cogolf.llm.usage import match_usage, render_match_usage
from cogolf.logs import configure
from cogolf.matchid import MatchIdError, check_match_id, new_match_id
from cogolf.replay import ReplayError, read_replay
from cogolf.sandbox import WeakSandboxError, make_sandbox
from cogolf.scorecard import render

DEFAULT_REPLAYS = Path("replays")
TRANSCRIPTS_DIR = "llm"  # an LLM seat's transcript, beside the replays


def register(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "play",
        help="play a match between two bots and print the scorecard",
        description=(
            "Play a complete match between two bots, every program in the sandbox, "
            "write replays/<match_id>.ndjson and print the scorecard. "
            "POLICY is literalist, pedant, path/to/file.py:name or module:name. "
            "By default both bots run as separate processes over real websockets."
        ),
    )
    p.add_argument("--seed", type=int, default=None, help="match seed (default 0)")
    p.add_argument("--seat0", default=None, metavar="POLICY", help="default: literalist")
    p.add_argument("--seat1", default=None, metavar="POLICY", help="default: pedant")
    p.add_argument("--holes", type=int, default=None, help="holes to play (default 9)")
    p.add_argument(
        "--hole-deadline",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds per hole (default {rules.HOLE_DEADLINE_SECONDS:g})",
    )
    p.add_argument(
        "--retry-deadline",
        type=float,
        default=None,
        metavar="S",
        help=f"seconds for the retry (default {rules.RETRY_DEADLINE_SECONDS:g})",
    )
    p.add_argument("--match-id", default=None, help="default: play-<seed>-<timestamp>-<random hex>")
    add_replays_option(p, DEFAULT_REPLAYS)
    p.add_argument(
        "--in-process",
        action="store_true",
        help="run both policies in this process instead of as websocket bots",
    )
    p.add_argument(
        "--from",
        dest="from_replay",
        type=Path,
        default=None,
        metavar="FILE",
        help=(
            "re-run a replay's match: its seed, deck check and config; the bots are "
            "--seat0/--seat1 (a recorded built-in baseline is kept, nothing else is loaded)"
        ),
    )
    p.add_argument("-v", "--verbose", action="store_true", help="log every hole to stderr")
    p.add_argument(
        "--explain",
        action="store_true",
        help="after the scorecard, explain every hole (as `cogolf replay FILE --explain`)",
    )
    add_deck_options(p)
    add_sandbox_options(p)
    p.set_defaults(func=run)


class _Refused(Exception):
    """The server or a bot refused the match: a message and the exit status."""

    def __init__(self, message: str, code: int) -> None:
        super().__init__(message)
        self.code = code


class FromError(ValueError):
    """`--from` cannot re-run this replay as asked."""


def _recorded_seat(replay: Path, slot: int, recorded: str, given: str | None) -> str:
    """The policy for a seat of `--from`: the command line's, or a recorded built-in."""
    if given is not None:
        return given
    if recorded in builtin_names():
        return recorded
    raise FromError(
        f"{replay}: seat {slot} was played by {recorded[:80]!r}, which is not a built-in bot; "
        f"a replay never names code to run: pass --seat{slot} POLICY"
    )


def _config_from(args: argparse.Namespace) -> tuple[MatchConfig, str | None]:
    """The match configuration from the options, or from --from's replay header."""
    base = MatchConfig(names=("literalist", "pedant"))
    expected_digest = None
    names = (args.seat0 or base.names[0], args.seat1 or base.names[1])
    if args.from_replay is not None:
        replay = read_replay(args.from_replay)
        try:
            base = msgspec.convert(replay.header.config, MatchConfig)
        except msgspec.ValidationError as exc:
            raise ReplayError(f"{args.from_replay}:1: config: {exc}") from None
        expected_digest = replay.header.deck_digest
        names = (
            _recorded_seat(args.from_replay, 0, base.names[0], args.seat0),
            _recorded_seat(args.from_replay, 1, base.names[1], args.seat1),
        )
    config = msgspec.structs.replace(
        base,
        seed=args.seed if args.seed is not None else base.seed,
        holes=args.holes if args.holes is not None else base.holes,
        hole_deadline_seconds=args.hole_deadline or base.hole_deadline_seconds,
        retry_deadline_seconds=args.retry_deadline or base.retry_deadline_seconds,
        names=names,
    )
    problem = _config_problem(config)
    if problem:
        where = f"{args.from_replay}:1: " if args.from_replay is not None else ""
        raise FromError(f"{where}{problem}")
    return config, expected_digest


def _config_problem(config: MatchConfig) -> str:
    """The server's bounds, checked before anything starts."""
    if not 0 <= config.seed < 2**63:
        return f"seed {config.seed} is outside 0..2**63-1"
    for name in ("hole_deadline_seconds", "retry_deadline_seconds"):
        value = getattr(config, name)
        if not MIN_DEADLINE <= value <= MAX_DEADLINE:
            return f"{name} {value} is outside {MIN_DEADLINE}..{MAX_DEADLINE}"
    if not MIN_DEADLINE <= config.match_deadline_seconds <= MAX_MATCH_DEADLINE:
        return f"match_deadline_seconds is outside {MIN_DEADLINE}..{MAX_MATCH_DEADLINE}"
    return ""


def run(args: argparse.Namespace) -> int:
    configure("info" if args.verbose else "warning")
    deck = load_deck_or_exit(args)
    try:
        config, expected_digest = _config_from(args)
    except (ReplayError, FromError) as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    if expected_digest is not None and expected_digest != deck.digest:
        print(
            f"cogolf: {args.from_replay} was played on deck digest {expected_digest}; "
            f"the loaded deck is {deck.digest}",
            file=sys.stderr,
        )
        return 2
    try:
        refs = list(config.names)  # an LLM seat's name is shorter than its reference
        config = msgspec.structs.replace(config, names=tuple(seat_name(r) for r in refs))
        policies = [load_policy(n, deck_dir=args.deck) for n in refs]
    except PolicyError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    if not 1 <= config.holes <= len(deck.spec_keys()):
        print(f"cogolf: --holes must be between 1 and {len(deck.spec_keys())}", file=sys.stderr)
        return 2
    try:
        match_id = check_match_id(args.match_id, "--match-id") if args.match_id else None
    except MatchIdError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    # The random part keeps two runs of one seed in one second apart.
    match_id = match_id or new_match_id(f"play-{config.seed}-{time.strftime('%Y%m%d-%H%M%S')}")
    path = args.replays / f"{match_id}.ndjson"
    if path.exists():
        print(f"cogolf: {path} exists; choose another --match-id", file=sys.stderr)
        return 2

    # The server's modules are imported only by the match that needs them, so that
    # an --in-process match pays for none of them.
    async def in_process() -> None:
        from cogolf.engine.match import hash_seed_for
        from cogolf.runtime.local import run_match
        from cogolf.runtime.seats import InProcessSeat

        # One match needs the fork server of its own hash seed only.
        seed = config.hash_seed if config.hash_seed is not None else hash_seed_for(config.seed)
        sandbox = make_sandbox(
            args.sandbox, accept_weak=args.accept_weak_sandbox, hash_seeds=(seed,)
        )
        for slot, policy in enumerate(policies):
            getattr(policy, "warm", lambda: None)()  # an LLM client, before the first deadline
            opener = getattr(policy, "open_transcript", None)  # as its bot process would
            if opener is not None:
                opener(args.replays / TRANSCRIPTS_DIR, match_id, slot)
        try:
            from functools import partial

            from cogolf.bots.scripted import own_fallback

            # A policy that gives up (an LLM player out of time) plays what its bot would.
            fallback = partial(own_fallback, deck.public)
            seats = [InProcessSeat(i, p, fallback) for i, p in enumerate(policies)]
            await run_match(deck, config, match_id, seats, sandbox, path, start_sandbox=True)
        finally:
            await sandbox.close()

    async def told(match: Awaitable[None]) -> None:
        """The match, its seats' first fallbacks told on stderr as they happen."""
        notes = FallbackNotes(args.replays / TRANSCRIPTS_DIR)
        finished = asyncio.Event()
        follower = asyncio.create_task(
            follow(
                path,
                notes,
                lambda line: print(f"cogolf play: {line}", file=sys.stderr),
                finished=finished,
            )
        )
        try:
            await match
            finished.set()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(asyncio.shield(follower), 2.0)
        finally:
            follower.cancel()

    try:
        asyncio.run(
            told(
                in_process()
                if args.in_process
                else _over_websockets(args, deck, config, match_id, refs)
            )
        )
    except WeakSandboxError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 3
    except _Refused as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return exc.code
    except ReplayError as exc:  # e.g. the journal's name was taken meanwhile
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    print(render(read_replay(path)))
    usage = match_usage(args.replays, match_id)
    if usage is not None:
        print()
        print(render_match_usage(usage))
    if args.explain:
        from cogolf.pages.explain import explain  # loaded only when asked
        from cogolf.pages.view import deck_specs, view_from_file

        print()
        print(explain(view_from_file(path, specs=deck_specs(deck))))
    print(f"\n  replay: {path}")
    return 0


async def _over_websockets(
    args: argparse.Namespace, deck: Deck, config: MatchConfig, match_id: str, refs: list[str]
) -> None:
    """The match on a loopback server with one `cogolf bot` process per seat (`refs`:
    the seats' policy references)."""
    from cogolf.games.registry import LIVE
    from cogolf.server.play import BotStartError, play_on_server, policy_command
    from cogolf.server.requests import CreateMatch, RequestError
    from cogolf.server.run import ServeOptions, start_server

    try:
        server = await start_server(
            ServeOptions(
                games=LIVE,
                data_dir=args.replays,
                replays_dir=args.replays,
                meta_dir=args.replays / ".matches",
                decks={deck.name: deck},
                port=0,
                sandbox_mode=args.sandbox,
                accept_weak_sandbox=args.accept_weak_sandbox,
                connect_timeout=30.0,
                resume=False,
            )
        )
        try:
            request = CreateMatch(
                seed=config.seed,
                holes=config.holes,
                hole_deadline_seconds=config.hole_deadline_seconds,
                retry_deadline_seconds=config.retry_deadline_seconds,
                names=list(config.names),
                match_id=match_id,
                hash_seed=config.hash_seed,
            )
            commands = [
                policy_command(n, args.deck, transcripts=args.replays / TRANSCRIPTS_DIR)
                for n in refs
            ]
            await play_on_server(server, request, commands)
        finally:
            await server.stop()
    except BotStartError as exc:
        raise _Refused(str(exc), 4) from None
    except RequestError as exc:  # e.g. the journal's name was taken meanwhile
        raise _Refused(str(exc), 2) from None
