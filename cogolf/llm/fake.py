"""A fake chat provider on loopback, speaking the OpenAI and Anthropic wire formats.

The tests and `cogolf bench llm` point the real `openai` and `anthropic`
clients at it. Replies are scripted per model name (a queue of `Step`s: text,
HTTP status, headers, delay, stop reason); when a model's queue is empty a
responder answers: by default, for a Cogolf hole the pedant's play from the
public deck (so a played hole is told apart from the literalist fallback), and
for a golf hole a short Python source. Requests are kept in memory, never
written anywhere.
"""

from __future__ import annotations

import asyncio
import json
import re
import threading
from collections import defaultdict, deque
from collections.abc import Callable
from dataclasses import dataclass, field
from typing import Any

from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse
from starlette.routing import Route

from cogolf.deck import DEFAULT_DECK, PublicDeck, load_public
from cogolf.loopback import LoopbackServer

GOLF_STUB = "```python\nf=lambda*a:0\n```"


@dataclass(frozen=True)
class ToolCall:
    """A call of one of the client's tools, in either API's shape."""

    name: str
    arguments: dict[str, Any] = field(default_factory=dict)
    id: str = ""  # default: one numbered by the reply


@dataclass(frozen=True)
class Step:
    text: str = ""
    status: int = 200
    delay: float = 0.0
    finish: str | None = None  # default: "stop" (OpenAI) / "end_turn" (Anthropic)
    headers: dict[str, str] = field(default_factory=dict)
    cost: float | None = None  # reported in OpenAI usage, as some routers do
    refusal: str | None = None  # OpenAI's message.refusal
    tool_calls: tuple[ToolCall, ...] = ()  # finish defaults to "tool_calls" / "tool_use"


@dataclass(frozen=True)
class Call:
    api: str  # "openai" | "anthropic"
    model: str
    body: dict[str, Any]
    key: str  # what the client sent as its key

    def prompt(self) -> str:
        return "\n".join(str(m.get("content", "")) for m in self.body.get("messages", []))


def pedant_responder(deck: PublicDeck | None = None) -> Callable[[Call], Step]:
    deck = deck or load_public(DEFAULT_DECK)

    def respond(call: Call) -> Step:
        prompt = call.prompt()
        found = re.search(r"^Spec (\S+):", prompt, re.M)
        if found and found.group(1) in deck.specs:
            b = deck.specs[found.group(1)].baselines["pedant"]
            play = {
                "impl": b.impl,
                "note": "as the pedant reads it",
                "tests": [
                    {"name": t.name, "args": t.args, "expect": t.expect, "why": t.why}
                    for t in b.tests
                ],
            }
            return Step("Here is my play:\n```json\n" + json.dumps(play) + "\n```\n")
        return Step(GOLF_STUB)

    return respond


class FakeProvider:
    def __init__(self, respond: Callable[[Call], Step] | None = None, latency: float = 0.0) -> None:
        self.respond = respond or pedant_responder()
        self.latency = latency
        self.scripts: dict[str, deque[Step]] = defaultdict(deque)
        self.calls: list[Call] = []
        self._lock = threading.Lock()
        self.app = Starlette(
            routes=[
                Route("/v1/chat/completions", self._openai, methods=["POST"]),
                Route("/v1/messages", self._anthropic, methods=["POST"]),
            ]
        )
        self._server = LoopbackServer(self.app, "fake provider")
        self.port = 0

    def script(self, model: str, *steps: Step) -> None:
        with self._lock:
            self.scripts[model].extend(steps)

    def calls_for(self, model: str) -> list[Call]:
        with self._lock:
            return [c for c in self.calls if c.model == model]

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    async def _next(self, request: Request, api: str) -> tuple[Call, Step]:
        body = await request.json()
        key = request.headers.get("x-api-key") or request.headers.get("authorization", "")
        call = Call(api, str(body.get("model", "")), body, key.removeprefix("Bearer "))
        with self._lock:
            self.calls.append(call)
            queue = self.scripts.get(call.model)
            step = queue.popleft() if queue else None
        if step is None:
            step = self.respond(call)
        if step.delay or self.latency:
            await asyncio.sleep(step.delay + self.latency)
        return call, step

    @staticmethod
    def _tokens(call: Call, step: Step) -> tuple[int, int]:
        system = call.body.get("system") or ""
        calls = sum(len(json.dumps(t.arguments)) for t in step.tool_calls)
        return (len(call.prompt()) + len(str(system))) // 4 + 1, (len(step.text) + calls) // 4 + 1

    def _call_ids(self, step: Step) -> list[str]:
        return [t.id or f"call_{len(self.calls)}_{i}" for i, t in enumerate(step.tool_calls)]

    async def _openai(self, request: Request) -> JSONResponse:
        call, step = await self._next(request, "openai")
        if step.status != 200:
            body = {"error": {"message": step.text or f"status {step.status}", "type": "fake"}}
            return JSONResponse(body, step.status, headers=step.headers)
        prompt_tokens, completion_tokens = self._tokens(call, step)
        usage: dict[str, Any] = {
            "prompt_tokens": prompt_tokens,
            "completion_tokens": completion_tokens,
            "total_tokens": prompt_tokens + completion_tokens,
        }
        if step.cost is not None:
            usage["cost"] = step.cost
        message: dict[str, Any] = {
            "role": "assistant",
            "content": None if step.refusal else step.text,
            "refusal": step.refusal,
        }
        if step.tool_calls:
            message["tool_calls"] = [
                {"id": i, "type": "function",
                 "function": {"name": t.name, "arguments": json.dumps(t.arguments)}}
                for i, t in zip(self._call_ids(step), step.tool_calls, strict=True)
            ]
        finish = step.finish or ("tool_calls" if step.tool_calls else "stop")
        return JSONResponse(
            {
                "id": f"chatcmpl-{len(self.calls)}",
                "object": "chat.completion",
                "created": 0,
                "model": call.model,
                "usage": usage,
                "choices": [{"index": 0, "finish_reason": finish, "message": message}],
            },
            headers=step.headers,
        )

    async def _anthropic(self, request: Request) -> JSONResponse:
        call, step = await self._next(request, "anthropic")
        if step.status != 200:
            body = {
                "type": "error",
                "error": {"type": "fake_error", "message": step.text or f"status {step.status}"},
            }
            return JSONResponse(body, step.status, headers=step.headers)
        input_tokens, output_tokens = self._tokens(call, step)
        content: list[dict[str, Any]] = [{"type": "text", "text": step.text}] if step.text else []
        content += [
            {"type": "tool_use", "id": i, "name": t.name, "input": t.arguments}
            for i, t in zip(self._call_ids(step), step.tool_calls, strict=True)
        ]
        if not content:
            content = [{"type": "text", "text": ""}]
        return JSONResponse(
            {
                "id": f"msg_{len(self.calls)}",
                "type": "message",
                "role": "assistant",
                "model": call.model,
                "content": content,
                "stop_reason": step.finish or ("tool_use" if step.tool_calls else "end_turn"),
                "stop_sequence": None,
                "usage": {"input_tokens": input_tokens, "output_tokens": output_tokens},
            },
            headers=step.headers,
        )

    def start(self, port: int = 0) -> FakeProvider:
        self.port = self._server.start(port)
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> FakeProvider:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


def main(argv: list[str] | None = None) -> None:
    """`python -m cogolf.llm.fake`: try an LLM player with no model and no key."""
    import argparse

    parser = argparse.ArgumentParser(
        prog="python -m cogolf.llm.fake",
        description="Serve the fake chat provider on loopback until Ctrl-C: any model name "
        "gets the pedant's play for a Cogolf hole and a short Python source for a golf hole.",
    )
    parser.add_argument("--port", type=int, default=0, help="default: any free port")
    parser.add_argument(
        "--model-file", metavar="FILE", help="also write the model file for it (llm:FILE)"
    )
    args = parser.parse_args(argv)
    provider = FakeProvider().start(args.port)
    model = f'provider = "openai"\nmodel = "fake"\nbase_url = "{provider.openai_url}"\n'
    if args.model_file:
        with open(args.model_file, "w", encoding="utf-8") as out:
            out.write(model)
    print(
        f"fake provider on {provider.openai_url} (Ctrl-C stops it); its model file:\n", flush=True
    )
    print(model, flush=True)
    try:
        threading.Event().wait()
    except KeyboardInterrupt:
        pass
    finally:
        provider.stop()


if __name__ == "__main__":
    main()
