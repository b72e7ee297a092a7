"""An attempt's transcript as a readable conversation (`cogolf agent show`).

For the operator only: the transcript is a file (0600) that nothing serves. Each
request repeats the conversation so far, so only the messages a request adds are
printed, then the model's reply, its tokens and cost; refused calls say why.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cogolf.llm.redact import Redactor

MAX_LINE = 8 << 20
SHOWN = 2000  # characters of one message or tool result
_shown = Redactor(None).shown


def _text(value: Any) -> str:
    if isinstance(value, str):
        return value
    if isinstance(value, list):
        return "\n".join(_part(p) for p in value)
    return "" if value is None else json.dumps(value)


def _part(part: Any) -> str:
    if not isinstance(part, dict):
        return str(part)
    kind = part.get("type")
    if kind == "text":
        return str(part.get("text", ""))
    if kind == "tool_use":
        return f"[call {part.get('name')}] {json.dumps(part.get('input'))}"
    if kind == "tool_result":
        return f"[result] {_text(part.get('content'))}"
    return json.dumps(part)


def _clip(text: str) -> str:
    # a transcript is the provider's and the agent's text: no control character reaches
    # the operator's terminal
    lines = [_shown(line) if len(line) <= 300 else _shown(line[:300]) for line in
             text[:SHOWN].splitlines()]
    more = f"\n  ... ({len(text) - SHOWN} more characters)" if len(text) > SHOWN else ""
    return "\n".join(f"  {ln}" for ln in lines) + more


def _message(m: Any) -> str:
    if not isinstance(m, dict):
        return _clip(str(m))
    role = m.get("role", "?")
    text = _text(m.get("content"))
    for call in m.get("tool_calls") or []:
        fn = call.get("function", {}) if isinstance(call, dict) else {}
        text += f"\n[call {fn.get('name')}] {fn.get('arguments')}"
    return f"{role}:\n{_clip(text)}"


def _reply(api: str, reply: dict[str, Any]) -> dict[str, Any]:
    if api == "anthropic":
        return {"role": "assistant", "content": reply.get("content")}
    choices = reply.get("choices") or [{}]
    return choices[0].get("message") or {}


def render(path: Path) -> str:
    out: list[str] = []
    seen = 0
    api = "openai"
    with open(path, encoding="utf-8", errors="replace") as f:
        for n, line in enumerate(f, 1):
            try:
                record = json.loads(line[:MAX_LINE])
            except ValueError:
                out.append(f"(line {n} unreadable)")
                continue
            kind = record.get("kind") if isinstance(record, dict) else None
            if kind == "request":
                api = record.get("api", "openai")
                body = record.get("body") or {}
                messages = body.get("messages") or []
                if seen == 0 and body.get("system"):
                    out.append(f"system:\n{_clip(_text(body['system']))}")
                fresh = messages[seen:] if len(messages) >= seen else messages
                out += [_message(m) for m in fresh]
                seen = len(messages) + 1  # the reply is the next message
            elif kind == "attempt":
                if record.get("status") == "ok":
                    out.append(_message(_reply(api, record.get("reply") or {})))
                    cost = record.get("cost")
                    out.append(f"  ({record.get('input_tokens')} tokens in, "
                               f"{record.get('output_tokens')} out"
                               f"{'' if cost is None else f', cost {cost:.6f}'}, "
                               f"{record.get('latency')} s)")
                else:
                    out.append(f"(the call failed: {_shown(str(record.get('error')))})")
            elif kind == "refused":
                out.append(f"(refused by the gateway: {_shown(str(record.get('reason')))})")
    return "\n".join(out)
