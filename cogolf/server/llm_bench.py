"""`cogolf bench llm`: what the LLM player costs beyond the provider's own latency.

Two measurements, both with real `cogolf bot --llm` processes and the real
client talking HTTP to the fake provider, which answers after a fixed latency:

- overhead: one seat plays holes against a minimal seat-protocol server in this
  process; per hole, the time from sending the observation to receiving the
  play, less the provider's latency (prompt, HTTP, parsing, validation,
  transcript, the bot runtime and the websocket);
- seats: many LLM seats at once in real matches on a real server (sandbox
  included); every hole's play must be the model's, in time: no fallback sent
  by the bot, none played by the server.
"""

from __future__ import annotations

import asyncio
import json
import os
import statistics
import sys
import tempfile
import time
from collections.abc import Mapping
from pathlib import Path
from typing import Any

import msgspec
import websockets

from cogolf.deck import Deck, load
from cogolf.engine.rules import Rules
from cogolf.game import LiveGame
from cogolf.llm.fake import FakeProvider
from cogolf.server.play import play_on_server
from cogolf.server.requests import CreateMatch
from cogolf.server.run import ServeOptions, start_server

KEY_ENV = "COGOLF_BENCH_LLM_KEY"


def _config(path: Path, fake: FakeProvider, provider: str, model: str) -> Path:
    url = fake.openai_url if provider == "openai" else fake.anthropic_url
    path.write_text(
        f'provider = "{provider}"\nmodel = "{model}"\nbase_url = "{url}"\n'
        f'api_key_env = "{KEY_ENV}"\nrequest_timeout = 30\n'
    )
    return path


def _bot(config: Path, url: str, transcripts: Path) -> list[str]:
    return [
        sys.executable,
        "-m",
        "cogolf",
        "bot",
        "--llm",
        str(config),
        "--url",
        url,
        "--transcripts",
        str(transcripts),
    ]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else 0.0


def _observation(deck: Deck, key: str, hole: int, holes: int) -> dict[str, Any]:
    return {
        "hole": hole,
        "holes": holes,
        "spec": msgspec.to_builtins(deck.public.specs[key].spec),
        "you": {"alias": "Ash", "slot": 0, "score": 0},
        "opponent": {"alias": "Basil", "slot": 1, "score": 0},
        "history": [],
        "rules": msgspec.to_builtins(Rules()),
    }


async def _overhead(
    deck: Deck, fake: FakeProvider, tmp: Path, provider: str, holes: int, latency: float
) -> list[float]:
    keys = sorted(deck.spec_keys())
    rtts: list[float] = []
    finished = asyncio.Event()

    async def seat(ws: Any) -> None:
        await ws.send(json.dumps({"type": "welcome", "match_id": "bench-llm", "slot": 0}))
        for hole in range(1, holes + 1):
            obs = _observation(deck, keys[(hole - 1) % len(keys)], hole, holes)
            start = time.perf_counter()
            await ws.send(
                json.dumps(
                    {
                        "type": "observation",
                        "hole": hole,
                        "deadline_seconds": 40.0,
                        "retry": False,
                        "observation": obs,
                    }
                )
            )
            reply = json.loads(await ws.recv())
            rtts.append(time.perf_counter() - start - latency)
            assert reply["type"] == "submission" and reply["hole"] == hole
        await ws.send(json.dumps({"type": "done", "result": {}}))
        finished.set()

    async with websockets.serve(seat, "127.0.0.1", 0, max_size=None) as server:
        port = next(iter(server.sockets)).getsockname()[1]
        config = _config(tmp / f"{provider}.toml", fake, provider, "bench")
        argv = _bot(config, f"ws://127.0.0.1:{port}/", tmp / "llm")
        proc = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.DEVNULL, stderr=asyncio.subprocess.DEVNULL
        )
        await asyncio.wait_for(finished.wait(), timeout=holes * 45 + 60)
        await proc.wait()
    return rtts


async def _seats(
    deck: Deck,
    games: Mapping[str, LiveGame],
    fake: FakeProvider,
    tmp: Path,
    seats: int,
    holes: int,
    deadline: float,
) -> dict[str, Any]:
    server = await start_server(
        ServeOptions(
            games=games,
            data_dir=tmp / "data",
            replays_dir=tmp / "data",
            meta_dir=tmp / "meta",
            decks={deck.name: deck},
            port=0,
            connect_timeout=60.0,
            resume=False,
        )
    )
    configs = [
        _config(tmp / f"seat{i}.toml", fake, ("openai", "anthropic")[i % 2], f"s{i}")
        for i in range(seats)
    ]
    start = time.perf_counter()
    try:
        played = await asyncio.gather(
            *(
                play_on_server(
                    server,
                    CreateMatch(
                        seed=m,
                        holes=holes,
                        hole_deadline_seconds=deadline,
                        retry_deadline_seconds=deadline,
                        names=[f"s{2 * m}", f"s{2 * m + 1}"],
                        match_id=f"bench-llm-{m}",
                    ),
                    [_bot(configs[2 * m + s], "{url}", tmp / "llm") for s in (0, 1)],
                )
                for m in range(seats // 2)
            )
        )
    finally:
        await server.stop()
    wall = time.perf_counter() - start
    server_fallbacks = 0
    for p in played:
        for line in p.replay_path.read_text().splitlines():
            record = json.loads(line)
            if record.get("kind") == "submission" and record.get("source") == "fallback":
                server_fallbacks += 1
    turns: list[dict[str, Any]] = []
    for path in sorted((tmp / "llm").glob("bench-llm-*.ndjson")):
        turns += [r for r in map(json.loads, path.read_text().splitlines()) if r["kind"] == "turn"]
    own = sum(t["outcome"] != "played" for t in turns)
    seconds = [t["seconds"] for t in turns]
    return {
        "seats": seats,
        "holes": holes,
        "deadline_s": deadline,
        "wall_s": round(wall, 2),
        "turns": len(turns),
        "bot_fallbacks": own,
        "server_fallbacks": server_fallbacks,
        "turn_p50_s": round(_pct(seconds, 0.5), 3),
        "turn_max_s": round(max(seconds), 3),
        "bot_exit_codes": sorted({c for p in played for c in p.bot_exit_codes}, key=str),
    }


async def bench_llm(
    games: Mapping[str, LiveGame],
    *,
    latency: float,
    holes: int,
    seats: int,
    seat_holes: int,
    deadline: float,
) -> dict[str, Any]:
    deck = load()
    os.environ.setdefault(KEY_ENV, "bench-key")
    out: dict[str, Any] = {"provider_latency_s": latency, "load": os.getloadavg()[0]}
    with (
        tempfile.TemporaryDirectory(prefix="cogolf-bench-llm-") as name,
        FakeProvider(latency=latency) as fake,
    ):
        tmp = Path(name)
        for provider in ("openai", "anthropic"):
            ms = [x * 1000 for x in await _overhead(deck, fake, tmp, provider, holes, latency)]
            out[f"overhead_ms_{provider}"] = {
                "holes": len(ms),
                "p50": round(statistics.median(ms), 2),
                "p95": round(_pct(ms, 0.95), 2),
                "max": round(max(ms), 2),
            }
        out["concurrent"] = await _seats(deck, games, fake, tmp, seats, seat_holes, deadline)
    out["load_after"] = os.getloadavg()[0]
    return out


def format_bench(numbers: dict[str, Any]) -> str:
    lines = [
        f"provider latency {numbers['provider_latency_s']} s (fake provider, loopback); "
        f"load {numbers['load']:.2f} -> {numbers['load_after']:.2f}"
    ]
    for provider in ("openai", "anthropic"):
        o = numbers[f"overhead_ms_{provider}"]
        lines.append(
            f"  overhead per hole beyond the provider, {provider:<9}: p50 {o['p50']} ms, "
            f"p95 {o['p95']} ms, max {o['max']} ms ({o['holes']} holes)"
        )
    c = numbers["concurrent"]
    lines.append(
        f"  {c['seats']} LLM seats at once, {c['holes']} holes, deadline {c['deadline_s']} s: "
        f"{c['turns']} turns, bot fallbacks {c['bot_fallbacks']}, server fallbacks "
        f"{c['server_fallbacks']}, turn p50 {c['turn_p50_s']} s, max {c['turn_max_s']} s, "
        f"wall {c['wall_s']} s, bot exit codes {c['bot_exit_codes']}"
    )
    return "\n".join(lines)
