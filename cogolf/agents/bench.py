"""`cogolf bench agent`: what the gateway adds to a model call, and attempts per minute.

The gateway's overhead is measured side by side in one run: the same calls to the
fake provider at a fixed latency, straight and through a gateway forwarding with each
client (h11, today's; httpx, the one before), with the real openai client (p50 and
p99 of the difference), and the gateway's own time per call (from receiving a
request to forwarding it, plus from the reply to answering).
Attempts per minute: the oracle (the built-in agent writing the reference) on a task,
walled and scored, at each `parallel` in one run.
"""

from __future__ import annotations

import asyncio
import contextlib
import statistics
import time
from pathlib import Path
from typing import Any

from cogolf.agents.gateway import Gateway
from cogolf.agents.meter import Budget, Meter
from cogolf.agents.oracle import ORACLE, checked_agent, responder
from cogolf.agents.runs import run_attempts
from cogolf.game import AgentTask
from cogolf.llm.config import LLMConfig
from cogolf.llm.fake import FakeProvider

MESSAGES = [{"role": "user", "content": "Say something short."}]


def _pct(values: list[float], q: float) -> float:
    ordered = sorted(values)
    return ordered[min(len(ordered) - 1, int(q * len(ordered)))]


CLIENTS = ("h11", "httpx")  # the gateway's forwarding client: today's, and the one before


def overhead(calls: int, latency: float) -> dict[str, Any]:
    """The same calls straight and through a gateway with each forwarding client, interleaved
    so that all see the same machine; per client, what it adds to a call (p50, p99)."""
    import openai

    with contextlib.ExitStack() as stack:
        fake = stack.enter_context(FakeProvider(latency=latency))
        config = LLMConfig(provider="openai", model="bench", base_url=fake.openai_url)
        clients = {"direct": openai.OpenAI(base_url=fake.openai_url, api_key="x", max_retries=0)}
        gateways: dict[str, Gateway] = {}
        for name in CLIENTS:
            gw = gateways[name] = stack.enter_context(Gateway(client=name))
            token = gw.grant(config, Meter(Budget()), None)
            clients[name] = openai.OpenAI(base_url=gw.openai_url, api_key=token, max_retries=0)
        times: dict[str, list[float]] = {name: [] for name in clients}
        for _ in range(2):  # warm every path (connections, imports)
            for client in clients.values():
                client.chat.completions.create(model="bench", messages=MESSAGES)
        for gw in gateways.values():
            gw.latencies.clear()
        for _ in range(calls):
            for name, client in clients.items():
                began = time.perf_counter()
                client.chat.completions.create(model="bench", messages=MESSAGES)
                times[name].append(time.perf_counter() - began)
    ms = 1000.0
    doc: dict[str, Any] = {"calls": calls, "latency_s": latency,
                           "direct_p50_ms": round(statistics.median(times["direct"]) * ms, 2)}
    for name, gw in gateways.items():
        added = [g - d for g, d in zip(times[name], times["direct"], strict=True)]
        own = list(gw.latencies)
        doc[name] = {
            "gateway_p50_ms": round(statistics.median(times[name]) * ms, 2),
            "added_p50_ms": round(statistics.median(added) * ms, 2),
            "added_p99_ms": round(_pct(added, 0.99) * ms, 2),
            "own_p50_ms": round(statistics.median(own) * ms, 3),
            "own_p99_ms": round(_pct(own, 0.99) * ms, 3),
        }
    return doc


def attempts_per_minute(task: AgentTask, parallels: list[int], attempts: int, latency: float,
                        out: Path) -> list[dict[str, Any]]:
    rows = []
    with FakeProvider(responder(task), latency=latency) as fake, Gateway() as gateway:
        for parallel in parallels:
            spec = checked_agent(ORACLE, fake, 900.0)
            began = time.perf_counter()
            results = asyncio.run(run_attempts(task, spec, out / f"parallel-{parallel}",
                                               attempts=attempts, parallel=parallel,
                                               entrant=ORACLE, gateway=gateway))
            seconds = time.perf_counter() - began
            ok = sum(1 for r in results if r is not None and r["agent"]["status"] == "ok")
            rows.append({"parallel": parallel, "attempts": attempts, "ok": ok,
                         "seconds": round(seconds, 2),
                         "per_minute": round(attempts * 60 / seconds, 2),
                         "agent_seconds_p50": round(statistics.median(
                             r["agent"]["seconds"] for r in results if r is not None), 2)})
    return rows


def format_bench(doc: dict[str, Any]) -> str:
    o = doc["overhead"]
    lines = [
        f"gateway overhead over {o['calls']} calls, fake provider at {o['latency_s']} s "
        f"(direct p50 {o['direct_p50_ms']} ms), per forwarding client, interleaved:",
    ]
    for name in CLIENTS:
        g = o[name]
        lines.append(
            f"  {name:<6} through the gateway p50 {g['gateway_p50_ms']} ms; added per call: "
            f"p50 {g['added_p50_ms']} ms, p99 {g['added_p99_ms']} ms (the gateway's own time: "
            f"p50 {g['own_p50_ms']} ms, p99 {g['own_p99_ms']} ms)")
    if doc.get("attempts"):
        lines.append(f"attempts of the oracle on {doc['task']} (walled, scored):")
        for r in doc["attempts"]:
            lines.append(f"  parallel {r['parallel']}: {r['attempts']} attempts "
                         f"({r['ok']} ok) in {r['seconds']} s = {r['per_minute']} per minute "
                         f"(agent run p50 {r['agent_seconds_p50']} s)")
    return "\n".join(lines)
