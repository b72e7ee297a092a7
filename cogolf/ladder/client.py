"""A bot on the ladder: `cogolf bot --ladder URL --key-env VAR --policy P`.

It connects to `WS /ladder` with its key in the `Authorization` header (never in the
URL: the URL is refused if it has a query string), says how many matches it plays at
once, and plays every seat the ladder sends it with its own `BotRuntime` (the path
of `cogolf bot --url`, the policy loaded afresh for each seat), so a policy written
for one match plays the ladder unchanged. When the ladder connection drops it
reconnects with a growing pause; the seats it holds play on meanwhile.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import sys
from pathlib import Path
from urllib.parse import urlsplit

import structlog
import websockets
from websockets.exceptions import ConnectionClosed, InvalidStatus

from cogolf.bots.client import BotRuntime, refusal
from cogolf.bots.policy import PolicyError, load_policy

log = structlog.get_logger("cogolf.bot")
FATAL = {400, 401, 403, 404}


class LadderURLError(ValueError):
    pass


def ladder_url(url: str) -> str:
    """The ladder's websocket address from a server's (ws://HOST:PORT or http://...)."""
    parts = urlsplit(url)
    if parts.query or parts.fragment or parts.username or parts.password:
        raise LadderURLError(
            "--ladder: give the server's address only; the key goes in the Authorization "
            "header (--key-env), never in the URL"
        )
    scheme = {"http": "ws", "https": "wss"}.get(parts.scheme, parts.scheme)
    if scheme not in ("ws", "wss") or not parts.netloc:
        raise LadderURLError(f"--ladder: expected ws://HOST:PORT or http://HOST:PORT, got {url!r}")
    path = parts.path.rstrip("/")
    if not path.endswith("/ladder"):
        path += "/ladder"
    return f"{scheme}://{parts.netloc}{path}"


async def _seat(url: str, policy_ref: str, deck_dir: Path | None, match_id: str) -> int:
    try:
        policy = load_policy(policy_ref, deck_dir=deck_dir)
    except PolicyError as exc:
        log.error("policy_failed", error=str(exc))
        return 2
    runtime = BotRuntime(url, policy, deck_dir=deck_dir)
    runtime.log = runtime.log.bind(match_id=match_id)
    return await runtime.run()


async def play_ladder(
    url: str,
    key: str,
    policy_ref: str,
    *,
    deck_dir: Path | None = None,
    concurrent: int = 1,
    matches: int | None = None,
) -> int:
    """Play the ladder's seats until stopped (or, with `matches`, that many seats)."""
    seats: set[asyncio.Task[int]] = set()
    given = 0
    backoff = 0.2
    while True:
        try:
            async with websockets.connect(
                url, additional_headers={"Authorization": f"Bearer {key}"}, open_timeout=10
            ) as ws:
                await ws.send(json.dumps({"type": "ready", "concurrent": concurrent}))
                backoff = 0.2
                async for frame in ws:
                    msg = json.loads(frame)
                    if msg.get("type") == "ladder_welcome":
                        log.info("ladder_joined", bot=msg.get("bot"))
                    elif msg.get("type") == "seat":
                        given += 1
                        task = asyncio.create_task(
                            _seat(str(msg["url"]), policy_ref, deck_dir, str(msg["match_id"]))
                        )
                        seats.add(task)
                        task.add_done_callback(seats.discard)
                        if matches is not None and given >= matches:
                            await ws.close()
                            break
                if matches is not None and given >= matches:
                    if seats:
                        await asyncio.wait(set(seats))
                    return 0
        except InvalidStatus as exc:
            status = exc.response.status_code
            if status in FATAL:
                reason = refusal(status, exc.response.body)
                print(
                    f"cogolf bot: the ladder refused the bot ({status}): {reason}",
                    file=sys.stderr,
                    flush=True,
                )
                return 2
            log.info("ladder_refused", status=status)  # 409: an old connection not yet gone
        except (OSError, ConnectionClosed, TimeoutError, ValueError) as exc:
            log.info("ladder_connection_lost", error=type(exc).__name__)
        await asyncio.sleep(backoff)
        backoff = min(backoff * 2, 5.0)


def run_ladder_bot(args: argparse.Namespace) -> int:
    """`cogolf bot --ladder`: check the options, then play."""
    try:
        url = ladder_url(args.ladder)
    except LadderURLError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    var = args.key_env
    key = os.environ.get(var, "")
    if not key:
        print(f"cogolf: --ladder needs the bot's key in ${var} (--key-env)", file=sys.stderr)
        return 2
    concurrent = args.concurrent
    if not 1 <= concurrent <= 16:
        print("cogolf: --concurrent must be 1 to 16", file=sys.stderr)
        return 2
    policy_ref = args.policy
    deck = args.deck
    try:
        load_policy(policy_ref, deck_dir=deck)
    except PolicyError as exc:
        print(f"cogolf: {exc}", file=sys.stderr)
        return 2
    try:
        return asyncio.run(
            play_ladder(
                url, key, policy_ref, deck_dir=deck, concurrent=concurrent, matches=args.matches
            )
        )
    except KeyboardInterrupt:
        return 130
