"""What the gateway lets through, per API: only the model call, rewritten to the entrant's
model and the attempt's output cap, and the reply read for its usage.

Fields are allowed by name (anything else, such as a provider-side tool, a file
reference or a second choice, is refused naming the field), tools must be the
client's own functions, and the call always goes upstream unstreamed: a streamed
request gets its reply back as a stream made from the whole reply, so every call is
metered from one usage report and redacted whole.
"""

from __future__ import annotations

import json
import math
from collections.abc import Iterator
from typing import Any

from cogolf.llm.config import LLMConfig

OPENAI_FIELDS = frozenset({
    "model", "messages", "max_tokens", "max_completion_tokens", "temperature", "top_p", "stop",
    "tools", "tool_choice", "parallel_tool_calls", "response_format", "seed", "n",
    "presence_penalty", "frequency_penalty", "logit_bias", "logprobs", "top_logprobs", "user",
    "stream", "stream_options", "reasoning_effort", "functions", "function_call",
})
ANTHROPIC_FIELDS = frozenset({
    "model", "messages", "system", "max_tokens", "temperature", "top_p", "top_k",
    "stop_sequences", "tools", "tool_choice", "stream", "metadata", "thinking",
})
# Content that makes the provider fetch or keep something on its side.
REFUSED_PARTS = frozenset({"file", "container_upload", "server_tool_use", "mcp_tool_use",
                           "web_search_tool_result", "code_execution_tool_result"})
MAX_DEPTH = 64


class Refused(ValueError):
    """A request the gateway will not forward; the message is the agent's error."""


def _depth(value: Any, level: int = 0) -> int:
    if level > MAX_DEPTH:
        return level
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return max((_depth(v, level + 1) for v in items), default=level)


def parse_body(data: bytes) -> dict[str, Any]:
    try:
        body = json.loads(data)
    except (ValueError, RecursionError):
        raise Refused("the request body is not JSON") from None
    if not isinstance(body, dict):
        raise Refused("the request body must be a JSON object")
    if _depth(body) > MAX_DEPTH:
        raise Refused(f"the request nests deeper than {MAX_DEPTH} levels")
    return body


def _check_parts(messages: Any) -> None:
    if not isinstance(messages, list) or not messages:
        raise Refused("messages must be a non-empty array")
    for i, m in enumerate(messages):
        content = m.get("content") if isinstance(m, dict) else None
        for j, part in enumerate(content if isinstance(content, list) else ()):
            if not isinstance(part, dict):
                continue
            kind = part.get("type")
            source = part.get("source")
            if kind in REFUSED_PARTS or (isinstance(source, dict) and source.get("type") == "file"):
                raise Refused(f"messages[{i}].content[{j}]: {kind!r} content is refused "
                              "(only the model call is forwarded: no files, no provider tools)")


def vet_openai(body: dict[str, Any], config: LLMConfig) -> tuple[dict[str, Any], int, bool]:
    """(the body to forward, its output cap, whether the agent asked for a stream)."""
    unknown = sorted(set(body) - OPENAI_FIELDS)
    if unknown:
        raise Refused(f"field {unknown[0]!r} is refused (only the model call is forwarded)")
    _check_parts(body.get("messages"))
    if body.get("n", 1) != 1:
        raise Refused("n must be 1")
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or tool.get("type") != "function":
            kind = tool.get("type") if isinstance(tool, dict) else tool
            raise Refused(f"tools[{i}]: type {kind!r} is refused; only the client's own "
                          "functions (type 'function') are forwarded")
    stream = body.get("stream") is True
    key = "max_completion_tokens" if "max_completion_tokens" in body else "max_tokens"
    out = dict(body)
    want = _cap(out.pop(key, None), config)
    out.pop("stream", None)
    out.pop("stream_options", None)
    out["model"] = config.model
    if config.temperature is not None and "temperature" not in out:
        out["temperature"] = config.temperature
    out.update(config.extra)
    return out | {"_cap_key": key}, want, stream


def vet_anthropic(body: dict[str, Any], config: LLMConfig) -> tuple[dict[str, Any], int, bool]:
    unknown = sorted(set(body) - ANTHROPIC_FIELDS)
    if unknown:
        raise Refused(f"field {unknown[0]!r} is refused (only the model call is forwarded)")
    _check_parts(body.get("messages"))
    for i, tool in enumerate(body.get("tools") or []):
        if not isinstance(tool, dict) or tool.get("type") not in (None, "custom"):
            kind = tool.get("type") if isinstance(tool, dict) else tool
            raise Refused(f"tools[{i}]: type {kind!r} is refused; only the client's own tools "
                          "(with an input_schema) are forwarded")
    stream = body.get("stream") is True
    out = dict(body)
    want = _cap(out.pop("max_tokens", None), config)
    out.pop("stream", None)
    out["model"] = config.model
    if config.temperature is not None and "temperature" not in out:
        out["temperature"] = config.temperature
    out.update(config.extra)
    return out | {"_cap_key": "max_tokens"}, want, stream


def _cap(asked: Any, config: LLMConfig) -> int:
    if isinstance(asked, bool) or not isinstance(asked, int) or asked < 1:
        return config.max_output_tokens
    return min(asked, config.max_output_tokens)


def finalize(body: dict[str, Any], cap: int) -> bytes:
    """The body as sent upstream, with the output cap the meter admitted."""
    out = dict(body)
    out[out.pop("_cap_key")] = cap
    return json.dumps(out).encode()


def estimate_tokens(data: bytes) -> int:
    """Input tokens a request body stands for, before the provider counts them."""
    return math.ceil(len(data) / 4)


def _count(value: Any) -> int | None:
    return value if type(value) is int and value >= 0 else None


def usage(api: str, reply: dict[str, Any]) -> tuple[int | None, int | None, float | None]:
    """(input tokens, output tokens, cost) as the reply reports them (None: not reported)."""
    u = reply.get("usage")
    if not isinstance(u, dict):
        return None, None, None
    if api == "openai":
        cost = u.get("cost")
        ok = type(cost) in (int, float) and 0 <= cost < 1e9
        return _count(u.get("prompt_tokens")), _count(u.get("completion_tokens")), \
            float(cost) if ok else None
    inputs = [_count(u.get(k)) for k in ("input_tokens", "cache_creation_input_tokens",
                                         "cache_read_input_tokens")]
    total = None if inputs[0] is None else sum(n or 0 for n in inputs)
    return total, _count(u.get("output_tokens")), None


def _event(data: Any, name: str | None = None) -> bytes:
    head = f"event: {name}\n" if name else ""
    return f"{head}data: {json.dumps(data)}\n\n".encode()


def stream_openai(reply: dict[str, Any], include_usage: bool) -> Iterator[bytes]:
    base = {k: reply.get(k) for k in ("id", "created", "model")} | {
        "object": "chat.completion.chunk"}
    for choice in reply.get("choices") or []:
        message = choice.get("message") or {}
        delta: dict[str, Any] = {"role": "assistant", "content": message.get("content")}
        calls = message.get("tool_calls")
        if calls:
            delta["tool_calls"] = [dict(c, index=i) for i, c in enumerate(calls)]
        index = choice.get("index", 0)
        yield _event(base | {"choices": [{"index": index, "delta": delta,
                                          "finish_reason": None}]})
        yield _event(base | {"choices": [{"index": index, "delta": {},
                                          "finish_reason": choice.get("finish_reason")}]})
    if include_usage:
        yield _event(base | {"choices": [], "usage": reply.get("usage")})
    yield b"data: [DONE]\n\n"


def stream_anthropic(reply: dict[str, Any]) -> Iterator[bytes]:
    u = reply.get("usage") or {}
    start = {k: reply.get(k) for k in ("id", "type", "role", "model")} | {
        "content": [], "stop_reason": None, "stop_sequence": None,
        "usage": {"input_tokens": u.get("input_tokens", 0), "output_tokens": 0}}
    yield _event({"type": "message_start", "message": start}, "message_start")
    for i, block in enumerate(reply.get("content") or []):
        kind = block.get("type")
        if kind == "tool_use":
            empty = {"type": "tool_use", "id": block.get("id"), "name": block.get("name"),
                     "input": {}}
            delta = {"type": "input_json_delta", "partial_json": json.dumps(block.get("input"))}
        elif kind == "thinking":
            empty = {"type": "thinking", "thinking": ""}
            delta = {"type": "thinking_delta", "thinking": block.get("thinking", "")}
        else:
            empty = {"type": "text", "text": ""}
            delta = {"type": "text_delta", "text": block.get("text", "")}
        yield _event({"type": "content_block_start", "index": i, "content_block": empty},
                     "content_block_start")
        yield _event({"type": "content_block_delta", "index": i, "delta": delta},
                     "content_block_delta")
        if kind == "thinking" and block.get("signature"):
            yield _event({"type": "content_block_delta", "index": i,
                          "delta": {"type": "signature_delta",
                                    "signature": block["signature"]}}, "content_block_delta")
        yield _event({"type": "content_block_stop", "index": i}, "content_block_stop")
    yield _event({"type": "message_delta",
                  "delta": {"stop_reason": reply.get("stop_reason"),
                            "stop_sequence": reply.get("stop_sequence")},
                  "usage": {"output_tokens": u.get("output_tokens", 0)}}, "message_delta")
    yield _event({"type": "message_stop"}, "message_stop")
