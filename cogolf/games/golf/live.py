"""Playing a golf course as a live solo match: over real websockets, or in process.

`cogolf golf play` uses this. With a policy, a server comes up on an ephemeral
loopback port, the match is created on it, and the policy plays as a separate
`cogolf bot` process, connecting the way any bot would. With `wait` (or a
ws://HOST:PORT address to listen on) the match is hosted and this waits for an
external bot at the announced seat URL. `--in-process` runs the same driver with
the policy in this process.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from urllib.parse import urlsplit

from cogolf.bots.policy import Policy
from cogolf.games.golf.courses import get_course
from cogolf.games.golf.driver import GolfDriver, golf_header
from cogolf.games.golf.game import GAME
from cogolf.games.golf.holes import load_holes
from cogolf.games.golf.seat import GolfInProcessSeat
from cogolf.games.golf.settings import GolfSettings
from cogolf.games.golf.wire import GolfConfig, GolfMatchResult
from cogolf.replay import ReplayWriter
from cogolf.sandbox import make_sandbox
from cogolf.server.play import play_on_server, policy_command
from cogolf.server.requests import CreateMatch
from cogolf.server.run import ServeOptions, start_server


class BotAddressError(ValueError):
    """A --bot value that is neither a policy, `wait`, nor a ws://HOST:PORT address."""


@dataclass(frozen=True)
class Listen:
    """Host the match and wait for an external bot; port 0 picks a free one."""

    host: str = "127.0.0.1"
    port: int = 0


def parse_listen(bot: str) -> Listen | None:
    """`wait` or ws://HOST:PORT means: host and wait; anything else is a policy (None)."""
    if bot == "wait":
        return Listen()
    if "://" not in bot:
        return None
    parts = urlsplit(bot)
    if parts.scheme != "ws" or not parts.hostname or parts.path not in ("", "/"):
        raise BotAddressError(
            f"--bot {bot!r}: a websocket address must be ws://HOST:PORT (the address to "
            "listen on); seat URLs are printed once the match is hosted"
        )
    try:
        port = parts.port or 0
    except ValueError as exc:
        raise BotAddressError(f"--bot {bot!r}: {exc}") from None
    return Listen(parts.hostname, port)


@dataclass(frozen=True)
class LivePlay:
    result: GolfMatchResult | None
    replay_path: Path
    bot_exit_code: int | None = None


def _request(config: GolfConfig, match_id: str | None) -> CreateMatch:
    return CreateMatch(
        game="golf",
        course=config.course,
        names=[config.model],
        hole_deadline_seconds=config.hole_deadline_seconds,
        retry_deadline_seconds=config.retry_deadline_seconds,
        match_id=match_id,
    )


def _options(replays: Path, settings: GolfSettings, listen: Listen, timeout: float) -> ServeOptions:
    return ServeOptions(
        games={"golf": GAME},
        data_dir=replays,
        replays_dir=replays,
        meta_dir=replays / ".matches",
        decks={},  # this server hosts the golf match only
        host=listen.host,
        port=listen.port,
        # Golf files run in the golf runners (the Python course starts its own fork sandbox).
        sandbox=make_sandbox("spawn"),
        connect_timeout=timeout,
        resume=False,
        settings={"golf": settings},
    )


async def play_with_bot_process(
    config: GolfConfig, policy: str, settings: GolfSettings, replays: Path,
    *, match_id: str | None = None, bot_log_dir: Path | None = None,
    command: list[str] | None = None,
) -> LivePlay:
    """`command` (with `{url}`) replaces the bot process `policy` would be played by."""
    server = await start_server(_options(replays, settings, Listen(), 30.0))
    try:
        if command is None:  # an LLM seat's transcript in replays/llm/
            command = policy_command(policy, transcripts=replays / "llm")
        played = await play_on_server(
            server, _request(config, match_id), [command], bot_log_dir=bot_log_dir
        )
    finally:
        await server.stop()
    return LivePlay(played.result, played.replay_path, played.bot_exit_codes[0])  # type: ignore[arg-type]


async def host_and_wait(
    config: GolfConfig, listen: Listen, settings: GolfSettings, replays: Path,
    announce: Callable[[str], None], *, match_id: str | None = None, connect_timeout: float,
) -> LivePlay:
    server = await start_server(_options(replays, settings, listen, connect_timeout))
    try:
        hosted, tokens = server.registry.create(_request(config, match_id))
        base = f"{server.ws_url}/matches/{hosted.match_id}"
        announce(f"seat URL:  {base}/player?slot=0&token={tokens[0]}")
        announce(f"watch URL: {base}/watch")
        assert hosted.task is not None
        await hosted.task
    finally:
        await server.stop()
    return LivePlay(hosted.result, hosted.replay_path)  # type: ignore[arg-type]


async def play_in_process(
    config: GolfConfig, policy: Policy, settings: GolfSettings, replays: Path, match_id: str
) -> LivePlay:
    holes = load_holes()
    course = get_course(config.course)
    path = replays / f"{match_id}.ndjson"
    with ReplayWriter(path) as writer:
        writer.write(golf_header(match_id, config, holes))  # type: ignore[arg-type]
        driver = GolfDriver(
            match_id=match_id,
            config=config,
            course=course,
            holes=holes,
            runner=course.runner(settings.limits),
            limits=settings.limits,
            seat=GolfInProcessSeat(policy),
            writer=writer,
            results_dir=settings.results_dir,
        )
        result = await driver.run()
    return LivePlay(result, path)

