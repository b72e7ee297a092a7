"""Playing one league match: the only place the league touches the game runtime.

Every executor calls `play_match` and nothing else, so how a match is played
(a real websocket match, each bot in its own process) is the same for local and
Ray nights alike. The contract is small: play `job`,
write `replays_dir/<match_id>.ndjson`, return its path. Raise `PlayError` (or
any exception) only for a failure of the infrastructure before or around the
match; everything a bot does wrong ends up inside the replay.
"""

from __future__ import annotations

import tempfile
from pathlib import Path

from cogolf.bots.policy import PolicyError, load_policy
from cogolf.deck import DeckError, load
from cogolf.league.jobs import MatchJob

CONNECT_TIMEOUT = 30.0  # seconds for both bot processes to connect


class PlayError(RuntimeError):
    """The match could not be played for a reason outside the bots' control."""


async def play_match(job: MatchJob, replays_dir: Path) -> Path:
    """Play `job` to the end as a real websocket match and return the path of its replay.

    A server comes up on an ephemeral loopback port for this match alone, and each
    seat is its own process that connects the way any bot would: a policy entrant
    runs `cogolf bot --policy`, a command entrant runs its command with the seat URL
    as `{url}` and in `COGOLF_URL`.
    """
    # Imported here so that reading and ranking replays never needs the server or sandbox.
    from cogolf.server.play import BotStartError, play_on_server, policy_command
    from cogolf.server.registry import CreateMatch
    from cogolf.server.run import ServeOptions, start_server

    try:
        deck = load(Path(job.deck), Path(job.references))
    except DeckError as exc:
        raise PlayError(f"cannot load the pack: {exc}") from None
    if deck.digest != job.deck_digest:
        raise PlayError(
            f"the pack at {job.deck} changed since the night was scheduled "
            f"({deck.digest} != {job.deck_digest})"
        )
    commands: list[list[str]] = []
    for seat in job.seats:
        if seat.command is not None:
            commands.append(list(seat.command))
            continue
        assert seat.policy is not None
        try:
            load_policy(seat.policy, deck_dir=Path(job.deck))
        except PolicyError as exc:
            raise PlayError(f"{seat.name}: {exc}") from None
        commands.append(policy_command(seat.policy, Path(job.deck)))
    replays_dir = Path(replays_dir)
    replays_dir.mkdir(parents=True, exist_ok=True)
    path = replays_dir / job.replay_name
    with tempfile.TemporaryDirectory(prefix="cogolf-league-") as scratch:
        server = await start_server(
            ServeOptions(
                data_dir=Path(scratch),
                replays_dir=replays_dir,
                meta_dir=Path(scratch),
                decks={deck.name: deck},
                port=0,
                sandbox_mode=job.sandbox,
                accept_weak_sandbox=job.accept_weak_sandbox,
                connect_timeout=CONNECT_TIMEOUT,
                resume=False,
            )
        )
        try:
            cfg = job.config()
            request = CreateMatch(
                seed=cfg.seed,
                holes=cfg.holes,
                hole_deadline_seconds=cfg.hole_deadline_seconds,
                retry_deadline_seconds=cfg.retry_deadline_seconds,
                match_deadline_seconds=cfg.match_deadline_seconds,
                names=list(cfg.names),
                deck=deck.name,
                match_id=job.match_id,
            )
            if path.exists():
                path.unlink()  # a stale or void attempt; this one starts a fresh journal
            played = await play_on_server(server, request, commands, bot_log_dir=Path(scratch))
        except BotStartError as exc:
            raise PlayError(str(exc)) from exc
        finally:
            await server.stop()
    if played.result is None:
        raise PlayError(f"{job.match_id}: the match ended without a result")
    return path
