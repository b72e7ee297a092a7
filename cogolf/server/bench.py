"""`cogolf bench server`: concurrent matches with instant bots over real websockets.

Measures what the server adds: matches per second end to end, and the time from
an observation being sent to the seat's reply arriving (the bots answer at once,
so this is the server's and the transport's own latency).
"""

from __future__ import annotations

import asyncio
import json
import statistics
import tempfile
import time
from collections.abc import Awaitable, Callable, Mapping
from pathlib import Path
from typing import Any

import websockets

from cogolf.bots.scripted import baseline_play
from cogolf.deck import Deck
from cogolf.game import LiveGame
from cogolf.server.pages import Pages
from cogolf.server.requests import CreateMatch
from cogolf.server.run import ServeOptions, start_server


async def _instant_bot(url: str, deck: Deck) -> None:
    async with websockets.connect(url, max_size=None) as ws:
        async for frame in ws:
            msg = json.loads(frame)
            if msg["type"] == "observation":
                key = msg["observation"]["spec"]["key"]
                play = baseline_play(deck.public, key, "literalist")
                await ws.send(json.dumps({"type": "submission", "hole": msg["hole"], **play}))
            elif msg["type"] == "done":
                return


def _pct(values: list[float], q: float) -> float:
    if not values:
        return float("nan")
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))]


async def bench_server(
    deck: Deck,
    *,
    games: Mapping[str, LiveGame],
    matches: int,
    holes: int,
    sandbox_mode: str,
    accept_weak: bool,
    pages: Pages | None = None,
    during: Callable[[str], Awaitable[Callable[[], Awaitable[None]]]] | None = None,
) -> dict[str, Any]:
    """`during(url)` starts something beside the matches (e.g. spectators on the pages
    `pages` serves) and returns once it is under way; what it returns stops it."""
    with tempfile.TemporaryDirectory(prefix="cogolf-bench-") as tmp:
        server = await start_server(
            ServeOptions(
                games=games,
                data_dir=Path(tmp),
                decks={deck.name: deck},
                port=0,
                sandbox_mode=sandbox_mode,
                accept_weak_sandbox=accept_weak,
                resume=False,
                # Every bot connects from loopback: the caps must admit all of them.
                max_connections=max(1000, 2 * matches + 16),
                max_connections_per_address=2 * matches + 16,
                pages=pages,
            )
        )
        stop_beside = await during(server.url) if during is not None else None
        try:
            hosted = []
            clients = []
            start = time.perf_counter()
            for i in range(matches):
                h, tokens = server.registry.create(CreateMatch(seed=i, holes=holes))
                hosted.append(h)
                for slot in (0, 1):
                    url = (
                        f"{server.ws_url}/matches/{h.match_id}/player"
                        f"?slot={slot}&token={tokens[slot]}"
                    )
                    clients.append(_instant_bot(url, deck))
            await asyncio.gather(*clients)
            await asyncio.gather(*(h.task for h in hosted if h.task))
            elapsed = time.perf_counter() - start
        finally:
            if stop_beside is not None:
                await stop_beside()
            await server.stop()
    latencies = [lat for h in hosted if h.driver for lat in h.driver.reply_latencies]
    incomplete = [h.match_id for h in hosted if not h.result or h.result.reason != "complete"]
    return {
        "matches": matches,
        "holes_per_match": holes,
        "sandbox": sandbox_mode,
        "seconds": round(elapsed, 3),
        "matches_per_second": round(matches / elapsed, 3),
        "holes_per_second": round(matches * holes / elapsed, 2),
        "replies": len(latencies),
        "reply_ms_p50": round(_pct(latencies, 0.5) * 1000, 3),
        "reply_ms_p99": round(_pct(latencies, 0.99) * 1000, 3),
        "reply_ms_mean": round(statistics.fmean(latencies) * 1000, 3) if latencies else None,
        "incomplete": incomplete,
    }


def format_report(doc: dict[str, Any]) -> str:
    return "\n".join(
        [
            f"cogolf bench server: {doc['matches']} concurrent matches x "
            f"{doc['holes_per_match']} holes, sandbox {doc['sandbox']}",
            f"  total            {doc['seconds']:.3f} s",
            f"  matches/s        {doc['matches_per_second']:.3f}",
            f"  holes/s          {doc['holes_per_second']:.2f}",
            f"  observation->reply  p50 {doc['reply_ms_p50']:.2f} ms   "
            f"p99 {doc['reply_ms_p99']:.2f} ms   ({doc['replies']} replies)",
            f"  incomplete       {len(doc['incomplete'])}",
        ]
    )
