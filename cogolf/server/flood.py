"""`cogolf bench flood`: what a flooding opponent costs an honest bot.

A real `cogolf serve` process hosts matches between an honest bot (this process)
and either a quiet instant bot (clean) or a flooder (a separate process at the
lowest CPU priority, standing for a client on another machine, that, once
it has submitted its play for the open hole, sends wrong-hole and heavy frames as
fast as the socket takes them and reconnects whenever it is closed). Clean and
flooded matches alternate, with the same seeds. Reported: the honest bot's
observation->ack latency (p50, p99) in each, their ratio, its retries and
fallbacks, and the server's resident memory before and after the floods.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import multiprocessing
import os
import re
import secrets
import sys
import tempfile
import time
import urllib.request
from pathlib import Path
from typing import Any

import websockets

from cogolf.bots.scripted import baseline_play
from cogolf.deck import Deck, load
from cogolf.engine import rules

HEAVY_TESTS = 3000  # a frame just under the message cap, costly to validate


def _play(deck: Deck, msg: dict[str, Any]) -> str:
    key = msg["observation"]["spec"]["key"]
    return json.dumps(
        {"type": "submission", "hole": msg["hole"], **baseline_play(deck.public, key, "literalist")}
    )


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return (
        ordered[min(len(ordered) - 1, round(q * (len(ordered) - 1)))] if ordered else float("nan")
    )


async def _honest(url: str, deck: Deck) -> dict[str, Any]:
    """Answers every observation at once; observation->ack latency per hole, client side."""
    latencies: list[float] = []
    retries = errors = 0
    sent_at = 0.0
    async with websockets.connect(url, max_size=None) as ws:
        async for frame in ws:
            msg = json.loads(frame)
            if msg["type"] == "observation":
                sent_at = time.perf_counter()
                retries += bool(msg.get("retry"))
                await ws.send(_play(deck, msg))
            elif msg["type"] == "ack":
                latencies.append(time.perf_counter() - sent_at)
            elif msg["type"] == "error":
                errors += 1
            elif msg["type"] == "done":
                return {"latencies": latencies, "retries": retries, "errors": errors, "done": msg}
    raise RuntimeError("the honest bot's connection ended before `done`")


def _flood_frames(hole: int) -> tuple[str, str]:
    small = json.dumps({"type": "submission", "hole": 999, "impl": "x", "tests": []})
    tests = [{"name": "t", "args": [i], "expect": 0, "why": ""} for i in range(HEAVY_TESTS)]
    heavy = json.dumps({"type": "submission", "hole": hole, "impl": "def f(): 0", "tests": tests})
    while len(heavy.encode()) > rules.MAX_MESSAGE_BYTES:
        tests = tests[: len(tests) * 9 // 10]
        heavy = json.dumps({"type": "submission", "hole": hole, "impl": "x", "tests": tests})
    return small, heavy


async def _flood(url: str, deck_dir: str | None) -> dict[str, int]:
    deck = load(Path(deck_dir)) if deck_dir else load()
    stats = {"connections": 0, "refused_connections": 0, "frames": 0, "closed_1008": 0}
    state: dict[str, Any] = {"hole": 1, "submitted": asyncio.Event(), "done": False}

    async def reader(ws: Any) -> None:
        async for frame in ws:
            msg = json.loads(frame)
            if msg["type"] == "observation":
                state["submitted"].clear()
                state["hole"] = msg["hole"]
                await ws.send(_play(deck, msg))
                state["submitted"].set()
            elif msg["type"] == "done":
                state["done"] = True
                return

    async def writer(ws: Any) -> None:
        await state["submitted"].wait()
        small, heavy = _flood_frames(state["hole"])
        n = 0
        try:
            while True:
                n += 1
                await ws.send(heavy if n % 10 == 0 else small)
                stats["frames"] += 1
        except websockets.ConnectionClosed as exc:
            if exc.rcvd is not None and exc.rcvd.code == 1008:
                stats["closed_1008"] += 1
            raise

    while not state["done"]:
        try:
            async with websockets.connect(url, max_size=None, open_timeout=5) as ws:
                stats["connections"] += 1
                tasks = [asyncio.create_task(reader(ws)), asyncio.create_task(writer(ws))]
                with contextlib.suppress(Exception):
                    await asyncio.wait(tasks, return_when=asyncio.FIRST_COMPLETED)
                for t in tasks:
                    t.cancel()
                await asyncio.gather(*tasks, return_exceptions=True)
        except websockets.InvalidStatus as exc:
            if exc.response.status_code == 410:
                break  # the match is over
            stats["refused_connections"] += 1
            await asyncio.sleep(0.01)
        except (OSError, websockets.ConnectionClosed, TimeoutError):
            stats["refused_connections"] += 1
            await asyncio.sleep(0.01)
    return stats


def _flood_process(url: str, deck_dir: str | None, out: Any) -> None:
    # The flooder stands for a client on another machine: at the lowest priority, its
    # own CPU (building frames) is not taken from the server on a shared machine.
    with contextlib.suppress(OSError):
        os.nice(19)
    out.send(asyncio.run(_flood(url, deck_dir)))


async def _instant(url: str, deck: Deck) -> None:
    async with websockets.connect(url, max_size=None) as ws:
        async for frame in ws:
            msg = json.loads(frame)
            if msg["type"] == "observation":
                await ws.send(_play(deck, msg))
            elif msg["type"] == "done":
                return


def _rss_mb(pid: int) -> float:
    for line in Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1]) / 1024
    return float("nan")


def _post(url: str, admin: str, body: dict[str, Any]) -> dict[str, Any]:
    req = urllib.request.Request(
        f"{url}/matches",
        data=json.dumps(body).encode(),
        headers={"Authorization": f"Bearer {admin}", "Content-Type": "application/json"},
    )
    with urllib.request.urlopen(req, timeout=30) as resp:
        return json.loads(resp.read())


async def bench_flood(
    deck: Deck,
    *,
    rounds: int,
    holes: int,
    sandbox_mode: str,
    accept_weak: bool,
    deck_dir: Path | None = None,
) -> dict[str, Any]:
    admin = secrets.token_urlsafe(12)
    with tempfile.TemporaryDirectory(prefix="cogolf-flood-") as tmp:
        argv = [sys.executable, "-P", "-m", "cogolf", "serve", "--port", "0", "--data", tmp]
        argv += ["--admin-token", admin, "--sandbox", sandbox_mode]
        if accept_weak:
            argv.append("--accept-weak-sandbox")
        if deck_dir is not None:
            argv += ["--deck", str(deck_dir)]
        server = await asyncio.create_subprocess_exec(
            *argv, stdout=asyncio.subprocess.PIPE, stderr=asyncio.subprocess.DEVNULL
        )
        try:
            assert server.stdout is not None
            line = (await asyncio.wait_for(server.stdout.readline(), 120)).decode()
            found = re.search(r"listening on (http://\S+)", line)
            if not found:
                raise RuntimeError(f"cogolf serve did not start: {line!r}")
            url = found.group(1)
            clean: list[dict[str, Any]] = []
            flooded: list[dict[str, Any]] = []
            flooder: list[dict[str, int]] = []
            rss_before = rss_peak = 0.0
            ctx = multiprocessing.get_context("spawn")
            for r in range(rounds):
                for kind in ("clean", "flood"):
                    # Short deadlines: a flooder whose own play was refused costs
                    # seconds, not minutes; the honest bot answers in milliseconds.
                    body = {
                        "seed": 1000 + r,
                        "holes": holes,
                        "hole_deadline_seconds": 10.0,
                        "retry_deadline_seconds": 5.0,
                    }
                    doc = await asyncio.to_thread(_post, url, admin, body)
                    seat0, seat1 = (s["url"] for s in doc["seats"])
                    if kind == "clean":
                        honest, _ = await asyncio.gather(
                            _honest(seat0, deck), _instant(seat1, deck)
                        )
                        clean.append(honest)
                        if r == 0:
                            await asyncio.sleep(0.5)
                            rss_before = _rss_mb(server.pid)
                        continue
                    recv, send = ctx.Pipe(duplex=False)
                    d = str(deck_dir) if deck_dir else None
                    proc = ctx.Process(target=_flood_process, args=(seat1, d, send), daemon=True)
                    proc.start()
                    try:
                        flooded.append(await _honest(seat0, deck))
                        rss_peak = max(rss_peak, _rss_mb(server.pid))
                        if await asyncio.to_thread(recv.poll, 30):
                            flooder.append(recv.recv())
                    finally:
                        proc.join(5)
                        if proc.is_alive():
                            proc.kill()
            await asyncio.sleep(1.0)
            rss_after = _rss_mb(server.pid)
        finally:
            with contextlib.suppress(ProcessLookupError):
                server.terminate()
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(server.wait(), 30)
            if server.returncode is None:
                server.kill()
                await server.wait()

    def summary(runs: list[dict[str, Any]]) -> dict[str, Any]:
        lat = [x for run in runs for x in run["latencies"]]
        return {
            "acks": len(lat),
            "ack_ms_p50": round(_pct(lat, 0.5) * 1000, 3),
            "ack_ms_p99": round(_pct(lat, 0.99) * 1000, 3),
            "retries": sum(run["retries"] for run in runs),
            "errors": sum(run["errors"] for run in runs),
            "incomplete": sum(run["done"]["result"]["reason"] != "complete" for run in runs),
        }

    c, f = summary(clean), summary(flooded)
    return {
        "rounds": rounds,
        "holes_per_match": holes,
        "sandbox": sandbox_mode,
        "clean": c,
        "flood": f,
        "ratio_p50": round(f["ack_ms_p50"] / c["ack_ms_p50"], 3),
        "ratio_p99": round(f["ack_ms_p99"] / c["ack_ms_p99"], 3),
        "flooder": {
            k: sum(s[k] for s in flooder)
            for k in ("connections", "frames", "closed_1008", "refused_connections")
        },
        "server_rss_mb_before": round(rss_before, 1),
        "server_rss_mb_peak": round(rss_peak, 1),
        "server_rss_mb_after": round(rss_after, 1),
        "server_rss_mb_growth": round(rss_after - rss_before, 1),
        "pid": os.getpid(),
    }


def passed(doc: dict[str, Any]) -> bool:
    return (
        doc["ratio_p50"] < 1.5
        and doc["ratio_p99"] < 1.5
        and doc["server_rss_mb_growth"] <= 20
        and doc["flood"]["retries"] == 0
        and doc["flood"]["incomplete"] == 0
    )


def format_report(doc: dict[str, Any]) -> str:
    c, f = doc["clean"], doc["flood"]
    fl = doc["flooder"]
    return "\n".join(
        [
            f"cogolf bench flood: {doc['rounds']} clean + {doc['rounds']} flooded matches x "
            f"{doc['holes_per_match']} holes, sandbox {doc['sandbox']}",
            f"  honest observation->ack, clean    p50 {c['ack_ms_p50']:.2f} ms   "
            f"p99 {c['ack_ms_p99']:.2f} ms   ({c['acks']} acks, {c['retries']} retries)",
            f"  honest observation->ack, flooded  p50 {f['ack_ms_p50']:.2f} ms   "
            f"p99 {f['ack_ms_p99']:.2f} ms   ({f['acks']} acks, {f['retries']} retries)",
            f"  ratio flooded/clean               p50 {doc['ratio_p50']:.2f}   "
            f"p99 {doc['ratio_p99']:.2f}   (must stay under 1.5)",
            f"  flooder                           {fl['frames']} frames sent, "
            f"{fl['connections']} connections ({fl['closed_1008']} closed with 1008), "
            f"{fl['refused_connections']} refused",
            f"  server RSS                        before {doc['server_rss_mb_before']:.1f} MB   "
            f"peak {doc['server_rss_mb_peak']:.1f} MB   after {doc['server_rss_mb_after']:.1f} MB"
            f"   (growth {doc['server_rss_mb_growth']:+.1f} MB, at most 20)",
            f"  verdict                           {'PASS' if passed(doc) else 'FAIL'}",
        ]
    )
