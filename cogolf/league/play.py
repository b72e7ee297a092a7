"""Playing one league match: the only place the league touches the game runtime.

Every executor calls `play_match` and nothing else, so how a match is played
(a real websocket match, each bot in its own process) is the same for local and
Ray nights alike. Every bot process runs walled (`botwall`) and its output is
kept in `logs/<match_id>.<entrant>.log` under the night's folder. The contract is small: play `job`,
write `replays_dir/<match_id>.ndjson`, return its path. Raise `PlayError` (or
any exception) only for a failure of the infrastructure before or around the
match; everything a bot does wrong ends up inside the replay.
"""

from __future__ import annotations

import os
import re
import tempfile
from pathlib import Path

from cogolf.bots.policy import PolicyError, load_policy
from cogolf.deck import Deck, DeckError, load
from cogolf.league.botwall import BotSetupError, BotWall, bot_python, import_path, tail, wrap
from cogolf.league.jobs import MatchJob, Seat
from cogolf.llm.entrant import PREFIX as LLM_PREFIX
from cogolf.llm.entrant import seat_command as llm_seat_command

CONNECT_TIMEOUT = 30.0  # seconds for both bot processes to connect
LOGS_DIR = "logs"


class PlayError(RuntimeError):
    """The match could not be played for a reason outside the bots' control."""


def log_path(replays_dir: Path, match_id: str, entrant: str) -> Path:
    return Path(replays_dir) / LOGS_DIR / f"{match_id}.{entrant}.log"


def seat_command(seat: Seat, deck_dir: Path, log: Path, scratch_root: str = "") -> list[str]:
    """The walled launcher command of one seat: a policy runs `cogolf bot` under an
    interpreter every uid can run, with this installation on PYTHONPATH."""
    if seat.command is not None:
        # The public half of the pack is every bot's to read; the references are not.
        wall = BotWall(cwd=seat.workdir or str(Path.cwd()), readable=(str(deck_dir),),
                       env=seat.env, log=str(log), scratch_root=scratch_root)
        # `{python}`: the interpreter policy bots run, which can import this installation's
        # packages (websockets among them); a bare `python3` is whichever PATH finds first.
        python = bot_python() if any("{python}" in a for a in seat.command) else ""
        return wrap([a.replace("{python}", python) for a in seat.command], wall)
    assert seat.policy is not None
    if seat.policy.startswith(LLM_PREFIX):
        return llm_seat_command(seat.policy, deck_dir, log)
    import_path()  # fails early, with the reason, when bots cannot read the packages
    readable = [str(deck_dir)]
    target = seat.policy.rpartition(":")[0]
    if target.endswith(".py"):
        readable.append(target)
    argv = [bot_python(), "-s", "-P", "-m", "cogolf", "bot", "--url", "{url}",
            "--policy", seat.policy, "--deck", str(deck_dir)]
    return wrap(argv, BotWall(readable=tuple(readable), log=str(log), scratch_root=scratch_root))


def failed_seat(message: str, job: MatchJob, replays_dir: Path) -> str:
    """`message` with the last lines of the failed seat's log, which say why it died."""
    found = re.match(r"seat (\d)", message)
    if not found or int(found.group(1)) > 1:
        return message
    name = job.names[int(found.group(1))]
    path = log_path(replays_dir, job.match_id, name)
    lines = tail(path)
    if not lines:
        return f"{message} ({name}: no output)"
    shown = "\n    ".join(lines)
    return f"{message} ({name}); the last lines of {LOGS_DIR}/{path.name}:\n    {shown}"


async def play_match(job: MatchJob, replays_dir: Path) -> Path:
    """Play `job` to the end as a real websocket match and return the path of its replay.

    A server comes up on an ephemeral loopback port for this match alone, and each
    seat is its own process that connects the way any bot would: a policy entrant
    runs `cogolf bot --policy`, a command entrant runs its command with the seat URL
    as `{url}` and in `COGOLF_URL`; both walled, see `botwall`.
    """
    try:
        deck = load(Path(job.deck), Path(job.references))
    except DeckError as exc:
        raise PlayError(f"cannot load the pack: {exc}") from None
    if deck.digest != job.deck_digest:
        raise PlayError(
            f"the pack at {job.deck} changed since the night was scheduled "
            f"({deck.digest} != {job.deck_digest})"
        )
    replays_dir = Path(replays_dir)
    (replays_dir / LOGS_DIR).mkdir(parents=True, exist_ok=True)
    # The bots' scratch folders live here and go with the match, even when a launcher
    # is killed before it could clean up; others may pass through, not list it.
    with tempfile.TemporaryDirectory(prefix="cogolf-bots-", ignore_cleanup_errors=True) as bots:
        os.chmod(bots, 0o711)
        return await _play(job, deck, replays_dir, bots)


async def _play(job: MatchJob, deck: Deck, replays_dir: Path, bots: str) -> Path:
    # Imported here so that reading and ranking replays never needs the server or sandbox.
    from cogolf.games.registry import LIVE
    from cogolf.server.play import BotStartError, play_on_server
    from cogolf.server.requests import CreateMatch
    from cogolf.server.run import ServeOptions, start_server

    commands: list[list[str]] = []
    for seat in job.seats:
        if seat.policy is not None:
            try:
                load_policy(seat.policy, deck_dir=Path(job.deck))
            except PolicyError as exc:
                raise PlayError(f"{seat.name}: {exc}") from None
        try:
            log = log_path(replays_dir, job.match_id, seat.name)
            commands.append(seat_command(seat, Path(job.deck), log, bots))
        except BotSetupError as exc:
            raise PlayError(f"{seat.name}: {exc}") from None
    path = replays_dir / job.replay_name
    with tempfile.TemporaryDirectory(prefix="cogolf-league-") as scratch:
        server = await start_server(
            ServeOptions(
                games=LIVE,
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
            raise PlayError(failed_seat(str(exc), job, replays_dir)) from exc
        finally:
            await server.stop()
    if played.result is None:
        raise PlayError(f"{job.match_id}: the match ended without a result")
    return path
