"""Hostile clients against a real server: floods, oversize frames, half-open
connections, silent spectators, bad tokens, descriptor exhaustion and SIGTERM.

Every test asserts the outcome a seat or an operator sees: the honest seat's
verdicts unchanged against a clean run of the same seed, the match complete, a
clear refusal or close reason, a server that exits promptly with its journals whole.
"""

from __future__ import annotations

import asyncio
import json
import multiprocessing
import os
import signal
import socket
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

import httpx
import msgspec
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from cogolf.engine import rules
from cogolf.replay import read_replay
from cogolf.server.flood import _flood_process
from tests.polling import until
from tests.server.helpers import create, literalist_play, play_well, recv, running_server
from tests.serving import start_serve

ROOT = Path(__file__).resolve().parents[2]


def run(coro: Any) -> Any:
    return asyncio.run(coro)


def verdicts(path: Path) -> list[dict[str, Any]]:
    """What decides the scores: verdicts, hole scores, seat 0's submissions (times aside)."""
    out = []
    for event in read_replay(path).events:
        doc = msgspec.to_builtins(event)
        doc.pop("at", None)
        kind = event.__struct_config__.tag
        if kind in ("test_verdict", "hole_score") or (kind == "submission" and doc["slot"] == 0):
            out.append(doc)
    return out


async def honest(url: str) -> dict[str, Any]:
    """Answers every observation at once; counts retries and errors it was sent."""
    seen = {"retries": 0, "errors": []}
    async with websockets.connect(url) as ws:
        while True:
            msg = await recv(ws)
            if msg["type"] == "observation":
                seen["retries"] += bool(msg["retry"])
                await ws.send(literalist_play(msg["observation"], msg["hole"]))
            elif msg["type"] == "error":
                seen["errors"].append(msg)
            elif msg["type"] == "done":
                return seen | {"done": msg}


def test_a_flooding_opponent_changes_nothing_for_the_honest_seat(tmp_path):
    """The flooder (its own process) plays its hole, then sends wrong-hole and heavy frames
    as fast as the socket takes them and reconnects whenever closed."""

    async def scenario() -> None:
        async with running_server(tmp_path) as server:
            clean_id, urls = create(server, seed=11, holes=3, hole_deadline_seconds=5.0)
            await asyncio.gather(honest(urls[0]), play_well(urls[1]))
            flood_id, urls = create(server, seed=11, holes=3, hole_deadline_seconds=5.0)
            ctx = multiprocessing.get_context("spawn")
            recv_end, send_end = ctx.Pipe(duplex=False)
            proc = ctx.Process(target=_flood_process, args=(urls[1], None, send_end), daemon=True)
            proc.start()
            try:
                seen = await honest(urls[0])
                assert await asyncio.to_thread(recv_end.poll, 60)
                flood = recv_end.recv()
            finally:
                proc.join(10)
                if proc.is_alive():
                    proc.kill()
        assert flood["frames"] > 1000  # it did flood
        assert flood["closed_1008"] >= 1  # and was closed for it
        assert seen["retries"] == 0 and seen["errors"] == []
        assert seen["done"]["result"]["reason"] == "complete"
        replays = tmp_path / "replays"
        clean, flooded = (
            verdicts(replays / f"{clean_id}.ndjson"),
            verdicts(replays / f"{flood_id}.ndjson"),
        )
        assert flooded == clean
        assert all(d["source"] == "seat" and d["attempts"] == 1 for d in flooded if "source" in d)

    run(scenario())


def test_frames_over_budget_are_refused_unread_then_closed_1008(tmp_path):
    async def scenario() -> None:
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, seed=5, holes=1)
            other = asyncio.create_task(play_well(urls[1]))
            junk = json.dumps({"type": "submission", "hole": 99, "impl": "x"})
            async with websockets.connect(urls[0]) as ws:
                obs = await recv(ws, "observation")
                for _ in range(rules.SEAT_FRAME_BURST + 2 * rules.SEAT_VIOLATIONS_BEFORE_CLOSE):
                    try:
                        await ws.send(junk)
                    except websockets.ConnectionClosed:
                        break
                refusals = []
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    while True:
                        msg = await recv(ws, timeout=10)
                        if msg["type"] == "error" and msg["cause"] == "over_budget":
                            refusals.append(msg)
                assert closed.value.rcvd.code == 1008
                assert "policy" in closed.value.rcvd.reason
                assert "refused" in closed.value.rcvd.reason
                assert refusals and "seat_" in refusals[0]["message"]
            # Reconnecting at once is refused; after the stated cooldown it works.
            with pytest.raises(InvalidStatus) as refused:
                async with websockets.connect(urls[0]):
                    pass
            assert refused.value.response.status_code == 429
            await asyncio.sleep(rules.SEAT_RECONNECT_COOLDOWN_SECONDS + 0.2)
            async with websockets.connect(urls[0]) as ws:
                obs = await recv(ws, "observation")
                await ws.send(literalist_play(obs["observation"], obs["hole"]))
                assert (await recv(ws, "ack"))["hole"] == 1
                done = await recv(ws, "done")
            assert done["result"]["reason"] == "complete"
            await other
            path = tmp_path / "replays" / f"{match_id}.ndjson"
            sub = [d for d in verdicts(path) if "source" in d]
            assert sub[0]["source"] == "seat"

    run(scenario())


def test_welcome_states_the_seat_limits(tmp_path):
    async def scenario() -> None:
        async with running_server(tmp_path) as server:
            _, urls = create(server, holes=1)
            async with websockets.connect(urls[0]) as ws:
                welcome = await recv(ws, "welcome")
        limits = welcome["rules"]
        assert limits["seat_frames_per_second"] == rules.SEAT_FRAMES_PER_SECOND
        assert limits["seat_bytes_per_second"] == rules.SEAT_BYTES_PER_SECOND
        assert limits["seat_inbound_queue"] == rules.SEAT_INBOUND_QUEUE
        assert limits["seat_violations_before_close"] == rules.SEAT_VIOLATIONS_BEFORE_CLOSE

    run(scenario())


def test_oversize_close_says_why_and_the_next_connection_gets_no_stale_error(tmp_path):
    async def scenario() -> None:
        async with running_server(tmp_path) as server:
            _, urls = create(server, holes=1)
            other = asyncio.create_task(play_well(urls[1]))
            big = json.dumps({"type": "submission", "hole": 1, "impl": "x", "note": "y" * 20000})
            async with websockets.connect(urls[0]) as ws:
                await recv(ws, "observation")
                await ws.send(big)
                with pytest.raises(websockets.ConnectionClosed) as closed:
                    await recv(ws)
            assert closed.value.rcvd.code == 1009
            assert "oversize" in closed.value.rcvd.reason
            assert str(rules.MAX_MESSAGE_BYTES) in closed.value.rcvd.reason
            await asyncio.sleep(0.3)  # the driver has taken the failed attempt
            async with websockets.connect(urls[0]) as ws:
                assert (await recv(ws))["type"] == "welcome"
                obs = await recv(ws)
                assert obs["type"] == "observation" and obs["retry"] is True
                await ws.send(literalist_play(obs["observation"], obs["hole"]))
                assert (await recv(ws))["type"] == "ack"  # no stale oversize error before it
            await other

    run(scenario())


def _half_open(port: int, source: str = "127.0.0.1") -> socket.socket:
    s = socket.create_connection(("127.0.0.1", port), timeout=5, source_address=(source, 0))
    s.sendall(b"GET /healthz HTTP/1.1\r\nHost: x\r\n")  # headers never finished
    return s


def _closed_by_server(s: socket.socket, timeout: float) -> bytes | None:
    """What the server sent before closing, or None if it is still open after `timeout`."""
    s.settimeout(timeout)
    data = b""
    try:
        while chunk := s.recv(4096):
            data += chunk
    except TimeoutError:
        return None
    except ConnectionResetError:
        pass
    return data


def test_half_open_connections_are_capped_and_timed_out(tmp_path):
    async def scenario() -> None:
        async with running_server(
            tmp_path, header_timeout=1.0, max_connections_per_address=10
        ) as server:
            port = int(server.url.rsplit(":", 1)[1])
            held = [_half_open(port) for _ in range(10)]
            over = _half_open(port)
            refusal = await asyncio.to_thread(_closed_by_server, over, 2)
            assert refusal is not None and b" 503 " in refusal
            assert b"maximum of 10 connections" in refusal
            started = time.monotonic()
            ends = await asyncio.gather(*(asyncio.to_thread(_closed_by_server, s, 5) for s in held))
            assert all(e == b"" for e in ends)  # closed without a response
            assert time.monotonic() - started < 4
            assert server.guard is not None and server.guard.open_connections == 0
            # The server serves normally afterwards.
            _, urls = create(server, holes=1)
            done = await asyncio.gather(play_well(urls[0]), play_well(urls[1]))
            assert done[0]["result"]["reason"] == "complete"
            for s in [*held, over]:
                s.close()

    run(scenario())


def test_spectators_are_capped_and_silent_ones_do_not_slow_the_match(tmp_path):
    from cogolf.server.spectators import MAX_WATCHERS

    async def scenario() -> None:
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=2)
            watch = f"{server.ws_url}/matches/{match_id}/watch"
            port = int(server.url.rsplit(":", 1)[1])
            silent = []  # raw sockets that complete the handshake and never read again
            for _ in range(4):
                s = socket.create_connection(("127.0.0.1", port))
                s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
                s.sendall(
                    f"GET /matches/{match_id}/watch HTTP/1.1\r\nHost: x\r\nUpgrade: websocket\r\n"
                    "Connection: Upgrade\r\nSec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\n"
                    "Sec-WebSocket-Version: 13\r\n\r\n".encode()
                )
                silent.append(s)
            hosted = server.registry.get(match_id)
            await until(
                lambda: len(hosted.spectators._feeds) == len(silent),
                "the silent sockets are watching",
            )
            others = [await websockets.connect(watch) for _ in range(MAX_WATCHERS - len(silent))]
            with pytest.raises(InvalidStatus) as full:
                await websockets.connect(watch)
            assert full.value.response.status_code == 503
            started = time.monotonic()
            done = await asyncio.gather(play_well(urls[0]), play_well(urls[1]))
            assert done[0]["result"]["reason"] == "complete"
            assert time.monotonic() - started < 60
            for ws in others:
                await ws.close()
            for s in silent:
                s.close()

    run(scenario())


@pytest.mark.parametrize(
    ("tokens", "message"),
    [
        (["a&b=c d#e-long", "goodtoken-123"], "tokens[0]"),
        (["samesame-token", "samesame-token"], "its own token"),
        (["short", "goodtoken-123"], "tokens[0]"),
        (["goodtoken-123"], "give 2"),
    ],
)
def test_tokens_are_url_safe_and_distinct(tmp_path, tokens, message):
    async def scenario() -> None:
        async with (
            running_server(tmp_path) as server,
            httpx.AsyncClient(base_url=server.url) as http,
        ):
            bad = await http.post("/matches", json={"tokens": tokens})
            assert bad.status_code == 400 and message in bad.json()["error"]
            good = await http.post("/matches", json={"tokens": ["tok-A_1234", "tok-B_5678"]})
            assert good.status_code == 201
            urls = [s["url"] for s in good.json()["seats"]]
            assert urls[0].endswith("token=tok-A_1234")
            done = await asyncio.gather(play_well(urls[0]), play_well(urls[1]))
            assert done[0]["result"]["reason"] == "complete"

    run(scenario())


# ----------------------------------------------------------- real `cogolf serve` processes


def _serve(data: Path, *extra: str, ulimit: int | None = None) -> tuple[subprocess.Popen, str]:
    # bash lowers the descriptor limit, then execs the server with its arguments ("$@")
    prefix = ["bash", "-c", f'ulimit -n {ulimit}; exec "$@"', "serve"] if ulimit else []
    log = open(data.parent / f"{data.name}.log", "ab")  # noqa: SIM115
    return start_serve("--data", str(data), *extra, stderr=log, prefix=prefix)


def _post(url: str, **body: Any) -> dict[str, Any]:
    reply = httpx.post(f"{url}/matches", json=body, timeout=30)
    assert reply.status_code == 201, reply.text
    return reply.json()


def test_descriptor_exhaustion_does_not_void_a_running_match(tmp_path):
    """At `ulimit -n 200`, hundreds of half-open connections from another address take
    what the caps allow; the match that is running keeps its sandbox and completes."""
    data = tmp_path / "data"
    proc, url = _serve(data, "--max-connections-per-address", "400", ulimit=200)
    port = int(url.rsplit(":", 1)[1])
    try:
        made = _post(url, seed=4, holes=2)
        urls = [s["url"] for s in made["seats"]]

        async def scenario() -> list[dict[str, Any]]:
            players = [asyncio.create_task(play_well(u)) for u in urls]

            async def both_seated() -> bool:
                async with httpx.AsyncClient(base_url=url, timeout=10) as http:
                    doc = (await http.get(f"/matches/{made['match_id']}")).json()
                return doc.get("seats_connected") == [True, True]

            await until(both_seated, "both seats connected")
            attackers = []
            for _ in range(300):
                try:
                    attackers.append(_half_open(port, source="127.0.0.2"))
                except OSError:
                    break
            try:
                return await asyncio.gather(*players)
            finally:
                for s in attackers:
                    s.close()

        done = run(scenario())
        assert [d["result"]["reason"] for d in done] == ["complete", "complete"]
        assert httpx.get(f"{url}/healthz", timeout=10).status_code == 200  # still serving
        replay = read_replay(data / "replays" / f"{made['match_id']}.ndjson")
        assert replay.result is not None and replay.result.reason == "complete"
    finally:
        proc.send_signal(signal.SIGTERM)
        proc.wait(30)
    log = (tmp_path / "data.log").read_text()
    assert "sandbox could not run" not in log and "harness_fault" not in log


def test_sigterm_stops_the_server_promptly_in_every_state(tmp_path):
    """A match waiting for its seats that a spectator joined and left, a match mid-hole
    with a seat that does not answer, a half-open connection: SIGTERM ends it in seconds, and
    every journal is whole (header first, no torn line)."""
    data = tmp_path / "data"
    proc, url = _serve(data, "--connect-timeout", "600")
    port = int(url.rsplit(":", 1)[1])
    waiting = _post(url, seed=1, holes=2)
    playing = _post(url, seed=2, holes=2)

    async def scenario() -> None:
        async with websockets.connect(waiting["watch_url"]) as ws:
            await recv(ws)  # the snapshot; then the spectator leaves
        seat = await websockets.connect(playing["seats"][0]["url"])
        quiet = await websockets.connect(playing["seats"][1]["url"])  # never answers
        await recv(seat, "observation")
        half = _half_open(port)
        started = time.monotonic()
        proc.send_signal(signal.SIGTERM)
        code = await asyncio.to_thread(proc.wait, 20)
        assert time.monotonic() - started < 10
        assert code == 0
        half.close()
        await seat.close()
        await quiet.close()

    run(scenario())
    for made in (waiting, playing):
        path = data / "replays" / f"{made['match_id']}.ndjson"
        lines = path.read_bytes().split(b"\n")
        assert lines[-1] == b""  # no torn last line
        assert json.loads(lines[0])["kind"] == "header"
        assert read_replay(path).result is None  # resumable


SANDBOX_SCRIPT = r"""
import asyncio, os, resource, sys
from cogolf.logs import configure
from cogolf.sandbox import make_sandbox
from cogolf.runtime.batch_queue import QueuedSandbox

async def main():
    configure("warning")  # logs go to stderr; stdout holds only the result line
    inner = make_sandbox(sys.argv[1], accept_weak=True)
    await inner.start()
    sb = QueuedSandbox(inner, max_batches=1)
    # Every descriptor taken: the next batch cannot start until some are freed.
    hog = []
    try:
        while True:
            hog.append(os.open("/dev/null", os.O_RDONLY))
    except OSError:
        pass
    def free():
        for fd in hog:
            os.close(fd)
    asyncio.get_running_loop().call_later(0.5, free)
    results = await asyncio.gather(
        *(sb.run_batch("def solve(a):\n    return a + 1\n", [[i]]) for i in range(3))
    )
    print([r.load.value for r in results], [r.results[0].value for r in results], sb.retried)
    await sb.close()

asyncio.run(main())
"""


@pytest.mark.parametrize("mode", ["fork", "spawn"])
def test_a_batch_that_hits_emfile_waits_and_runs(tmp_path, mode):
    script = tmp_path / "emfile.py"
    script.write_text(SANDBOX_SCRIPT)
    out = subprocess.run(
        ["bash", "-c", f"ulimit -n 256; exec '{sys.executable}' '{script}' {mode}"],
        capture_output=True,
        text=True,
        timeout=120,
        cwd=ROOT,
        env=dict(os.environ, PYTHONPATH=str(ROOT)),
    )
    assert out.returncode == 0, out.stderr[-2000:]
    last = out.stdout.strip().splitlines()[-1]
    assert last.startswith("['ok', 'ok', 'ok'] [1, 2, 3]"), last
    if mode == "spawn":  # every batch needs new descriptors: it did hit EMFILE, and waited
        assert int(last.rsplit(" ", 1)[1]) >= 1
