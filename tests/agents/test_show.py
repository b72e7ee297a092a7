"""`cogolf agent show`'s rendering: each message once, both APIs' shapes, refusals, and
no control character of a provider's or an agent's text reaching the terminal."""

from __future__ import annotations

import json
from pathlib import Path

from cogolf.agents.show import render


def test_a_transcript_reads_as_a_conversation(tmp_path: Path) -> None:
    first = [{"role": "user", "content": "the task"}]
    reply = {"role": "assistant", "content": [
        {"type": "text", "text": "looking \x1b[2J around"},
        {"type": "tool_use", "id": "t1", "name": "read_file", "input": {"path": "a.py"}}]}
    second = [*first, reply, {"role": "user", "content": [
        {"type": "tool_result", "tool_use_id": "t1", "content": "print(1)"}]}]
    lines = [
        {"kind": "request", "api": "anthropic", "body": {"system": "be careful",
                                                          "messages": first}},
        {"kind": "attempt", "status": "ok", "reply": {"content": reply["content"]},
         "input_tokens": 10, "output_tokens": 5, "cost": 0.001, "latency": 0.2},
        {"kind": "request", "api": "anthropic", "body": {"messages": second}},
        {"kind": "attempt", "status": "failed", "error": "HTTP 500"},
        {"kind": "refused", "reason": "limit:requests: max_requests 2 reached"},
    ]
    path = tmp_path / "t.ndjson"
    path.write_text("\n".join(json.dumps(x) for x in lines) + "\nnot json\n")
    text = render(path)
    assert "\x1b" not in text and "looking \\x1b[2J around" in text
    assert text.count("the task") == 1  # a request's earlier messages are not repeated
    assert "[call read_file]" in text and "[result] print(1)" in text
    assert "system:\n  be careful" in text and "cost 0.001000" in text
    assert "(the call failed: HTTP 500)" in text and "max_requests 2 reached" in text
    assert "(line 6 unreadable)" in text
