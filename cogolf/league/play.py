"""Playing one league match: the only place the league touches the game runtime.

An executor's attempt at a match is `play_match` (a server and bot processes for
this match alone: a Ray task) or `NightHost.play` (`league.host`: one server and
one pooled bot process per policy entrant for the whole night); both play the
match through `play_job` here, so a match is the same real websocket match
either way. Every bot process runs walled (`botwall`) and its output is kept
under the night's folder: `logs/<match_id>.<entrant>.log` for a bot of one
match, `logs/pool/<entrant>.log` for a pooled one. The contract is small: play
`job`, write `replays_dir/<match_id>.ndjson`, return its path. Raise `PlayError`
(or any exception) only for a failure of the infrastructure before or around the
match; everything a bot does wrong ends up inside the replay.
"""

from __future__ import annotations

import asyncio
import os
import re
import secrets
import subprocess
import tempfile
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

from cogolf.bots.policy import PolicyError, load_policy
from cogolf.deck import Deck, DeckError, load
from cogolf.league.botwall import BotSetupError, BotWall, bot_python, import_path, tail, wrap
from cogolf.league.jobs import MatchJob, Seat
from cogolf.league.llmseat import LLMSeats
from cogolf.llm.entrant import PREFIX as LLM_PREFIX
from cogolf.llm.transcript import TRANSCRIPTS_DIR, transcript_path

if TYPE_CHECKING:
    from cogolf.server.play import SeatStarter
    from cogolf.server.run import RunningServer

CONNECT_TIMEOUT = 30.0  # seconds for both bot processes to connect
LOGS_DIR = "logs"
POOL_DIR = "pool"  # under LOGS_DIR: one log per pooled bot process


class PlayError(RuntimeError):
    """The match could not be played for a reason outside the bots' control."""


def log_path(replays_dir: Path, match_id: str, entrant: str) -> Path:
    return Path(replays_dir) / LOGS_DIR / f"{match_id}.{entrant}.log"


def pool_log_path(replays_dir: Path, entrant: str) -> Path:
    return Path(replays_dir) / LOGS_DIR / POOL_DIR / f"{entrant}.log"


def policy_wall(policy: str, deck_dir: Path, log: Path, scratch_root: str,
                *, stdin: bool = False) -> BotWall:
    """The walls of a policy bot: it may read the pack's public half and its policy file."""
    import_path()  # fails early, with the reason, when bots cannot read the packages
    readable = [str(deck_dir)]
    target = policy.rpartition(":")[0]
    if target.endswith(".py"):
        readable.append(target)
    return BotWall(readable=tuple(readable), log=str(log), scratch_root=scratch_root, stdin=stdin)


def pool_command(policy: str, deck_dir: Path, log: Path, scratch_root: str) -> list[str]:
    """The walled launcher command of a pooled policy bot: seat URLs come on its stdin."""
    argv = [bot_python(), "-s", "-P", "-m", "cogolf", "bot", "--seats-from-stdin",
            "--policy", policy, "--deck", str(deck_dir)]
    return wrap(argv, policy_wall(policy, deck_dir, log, scratch_root, stdin=True))


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
    assert seat.policy is not None and not seat.policy.startswith(LLM_PREFIX)  # `llmseat`
    argv = [bot_python(), "-s", "-P", "-m", "cogolf", "bot", "--url", "{url}",
            "--policy", seat.policy, "--deck", str(deck_dir)]
    return wrap(argv, policy_wall(seat.policy, deck_dir, log, scratch_root))


def failed_seat(message: str, job: MatchJob, replays_dir: Path,
                logs: Sequence[Path] | None = None) -> str:
    """`message` with the last lines of the failed seat's log, which say why it died."""
    found = re.match(r"seat (\d)", message)
    if not found or int(found.group(1)) > 1:
        return message
    slot = int(found.group(1))
    name = job.names[slot]
    path = logs[slot] if logs is not None else log_path(replays_dir, job.match_id, name)
    lines = tail(path)
    if not lines:
        return f"{message} ({name}: no output)"
    shown = "\n    ".join(lines)
    where = path.relative_to(Path(replays_dir)).as_posix() if path.is_relative_to(
        Path(replays_dir)) else path.name
    return f"{message} ({name}); the last lines of {where}:\n    {shown}"


def job_deck(job: MatchJob) -> Deck:
    """The pack of `job`, as on disk now; PlayError when it is not the one scheduled."""
    try:
        deck = load(Path(job.deck), Path(job.references))
    except DeckError as exc:
        raise PlayError(f"cannot load the pack: {exc}") from None
    check_deck(job, deck)
    return deck


def check_deck(job: MatchJob, deck: Deck) -> None:
    if deck.digest != job.deck_digest:
        raise PlayError(
            f"the pack at {job.deck} changed since the night was scheduled "
            f"({deck.digest} != {job.deck_digest})"
        )


async def play_match(job: MatchJob, replays_dir: Path) -> Path:
    """Play `job` to the end as a real websocket match and return the path of its replay.

    A server comes up on an ephemeral loopback port for this match alone, and each
    seat is its own process that connects the way any bot would: a policy entrant
    runs `cogolf bot --policy`, a command entrant runs its command with the seat URL
    as `{url}` and in `COGOLF_URL`; both walled, see `botwall`. (A night played
    locally shares one server and pooled bots instead: `league.host`.)
    """
    deck = job_deck(job)
    replays_dir = Path(replays_dir)
    (replays_dir / LOGS_DIR).mkdir(parents=True, exist_ok=True)
    # The bots' scratch folders live here and go with the match, even when a launcher
    # is killed before it could clean up; others may pass through, not list it.
    with tempfile.TemporaryDirectory(prefix="cogolf-bots-", ignore_cleanup_errors=True) as bots:
        os.chmod(bots, 0o711)
        return await _play(job, deck, replays_dir, bots)


CHECK_SECONDS = 60.0  # a walled policy load that takes longer is a problem in itself


def policy_problem(policy: str, deck_dir: Path) -> str | None:
    """Why `policy` cannot be loaded, or None. A built-in or LLM policy is platform code,
    loaded here; a file or module is the entrant's code, so it is loaded the way a bot
    would load it, behind the bot's walls (`cogolf bot --check`), never in this process."""
    from cogolf.bots.policy import builtin_names

    if policy in builtin_names() or policy.startswith(LLM_PREFIX):
        try:
            load_policy(policy, deck_dir=deck_dir)
        except PolicyError as exc:
            return str(exc)
        return None
    with tempfile.TemporaryDirectory(prefix="cogolf-check-") as tmp:
        log = Path(tmp) / "check.log"
        argv = [bot_python(), "-s", "-P", "-m", "cogolf", "bot", "--check",
                "--policy", policy, "--deck", str(deck_dir)]  # fmt: skip
        command = wrap(argv, policy_wall(policy, deck_dir, log, ""))
        # The launcher relays this port in the bot's network namespace; nothing is served.
        env = dict(os.environ, COGOLF_URL="ws://127.0.0.1:9/check")
        try:
            done = subprocess.run(command, env=env, stdin=subprocess.DEVNULL,
                                  capture_output=True, timeout=CHECK_SECONDS)  # fmt: skip
        except subprocess.TimeoutExpired:
            return f"loading it took more than {CHECK_SECONDS:g} s (behind the bot's walls)"
        if done.returncode == 0:
            return None
        lines = tail(log) or [done.stderr.decode("utf-8", "replace").strip()]
        said = [ln.removeprefix("cogolf: ") for ln in lines if ln.startswith("cogolf: ")]
        return said[-1] if said else " / ".join(lines[-3:]) or f"exit {done.returncode}"


def check_policies(job: MatchJob) -> None:
    for seat in job.seats:
        if seat.policy is not None:
            problem = policy_problem(seat.policy, Path(job.deck))
            if problem is not None:
                raise PlayError(f"{seat.name}: {problem}")


def process_seat(job: MatchJob, seat: Seat, replays_dir: Path, bots: str,
                 llm: LLMSeats) -> SeatStarter:
    """A bot process for this seat of this match alone; an LLM seat's gateway token is
    revoked when the match is over."""
    from cogolf.server.play import ProcessSeat

    try:
        log = log_path(replays_dir, job.match_id, seat.name)
        if seat.policy is not None and seat.policy.startswith(LLM_PREFIX):
            slot = job.seats.index(seat)
            transcript = transcript_path(replays_dir / TRANSCRIPTS_DIR, job.match_id, slot)
            argv, token = llm.command(seat.policy, transcript, log, deck_dir=Path(job.deck),
                                      scratch_root=bots)
            return _TokenSeat(ProcessSeat(argv), llm, token)
        return ProcessSeat(seat_command(seat, Path(job.deck), log, bots))
    except BotSetupError as exc:
        raise PlayError(f"{seat.name}: {exc}") from None


class _TokenSeat:
    """A walled LLM seat's process: its gateway token dies with the match."""

    def __init__(self, inner: SeatStarter, llm: LLMSeats, token: str) -> None:
        self.inner, self.llm, self.token = inner, llm, token

    async def start(self, url: str, match_id: str) -> asyncio.Future[int]:
        return await self.inner.start(url, match_id)

    async def finish(self, *, failed: bool) -> int | None:
        try:
            return await self.inner.finish(failed=failed)
        finally:
            self.llm.revoke(self.token)


async def _play(job: MatchJob, deck: Deck, replays_dir: Path, bots: str) -> Path:
    check_policies(job)
    llm = LLMSeats()
    try:
        seats = [process_seat(job, seat, replays_dir, bots, llm) for seat in job.seats]
        return await _serve(job, deck, replays_dir, seats)
    finally:
        llm.close()


async def _serve(job: MatchJob, deck: Deck, replays_dir: Path,
                 seats: list[SeatStarter]) -> Path:
    # Imported here so that reading and ranking replays never needs the server or sandbox.
    from cogolf.games.registry import LIVE
    from cogolf.server.run import ServeOptions, start_server

    logs = [log_path(replays_dir, job.match_id, seat.name) for seat in job.seats]
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
                admin_token=secrets.token_urlsafe(32),  # the match is made here, never by a bot
            )
        )
        try:
            return await play_job(server, job, deck, replays_dir, seats, logs)
        finally:
            await server.stop()


async def play_job(
    server: RunningServer,
    job: MatchJob,
    deck: Deck,
    replays_dir: Path,
    seats: Sequence[SeatStarter],
    logs: Sequence[Path],
    *,
    release: Callable[[str], None] | None = None,
) -> Path:
    """Play `job` on `server` with `seats`; `logs` are the seats' bot logs, quoted when a
    bot dies before connecting. `release` forgets the match on a long-lived server."""
    from cogolf.server.play import BotStartError, play_seats
    from cogolf.server.requests import CreateMatch

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
    path = replays_dir / job.replay_name
    if path.exists():
        path.unlink()  # a stale or void attempt; this one starts a fresh journal
    try:
        played = await play_seats(server, request, seats)
    except BotStartError as exc:
        raise PlayError(failed_seat(str(exc), job, replays_dir, logs)) from exc
    finally:
        if release is not None:
            release(job.match_id)
    if played.result is None:
        raise PlayError(f"{job.match_id}: the match ended without a result")
    return path
