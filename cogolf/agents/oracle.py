"""The two built-in agents every task is checked with, through the whole pipeline.

Both are the built-in agent driven by the fake provider: the oracle's model writes the
task's reference solution into the workspace with `write_file` calls (the agent's own
channel, inside the walls) and finishes, and must score full marks; the no-op's model
finishes at once, and must leave no change and score the template's baseline. A task
that fails either has a harness or task bug, caught before it becomes a leaderboard.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, replace
from typing import Any

from cogolf.agents.spec import AgentSpec
from cogolf.game import AgentTask
from cogolf.llm.config import LLMConfig
from cogolf.llm.fake import Call, FakeProvider, Step, ToolCall

ORACLE, NOOP = "oracle", "no-op"
FINISH = Step(tool_calls=(ToolCall("finish", {"summary": "done"}),))


def oracle_steps(files: dict[str, bytes]) -> list[Step]:
    writes = tuple(ToolCall("write_file", {"path": path, "content": data.decode("utf-8")})
                   for path, data in sorted(files.items()))
    return [Step(tool_calls=writes), FINISH] if writes else [FINISH]


def checked_agent(name: str, fake: FakeProvider, time_limit: float) -> AgentSpec:
    llm = LLMConfig(provider="openai", model=f"cogolf-{name}", base_url=fake.openai_url)
    return AgentSpec(name=name, llm=llm, max_turns=5, time_limit=time_limit)


def _answered(call: Call) -> bool:
    """Whether the conversation already holds a tool's result (either API's shape)."""
    for m in call.body.get("messages", []):
        content = m.get("content") if isinstance(m, dict) else None
        if m.get("role") == "tool" or (isinstance(content, list) and any(
                isinstance(p, dict) and p.get("type") == "tool_result" for p in content)):
            return True
    return False


def responder(task: AgentTask) -> Callable[[Call], Step]:
    """The fake provider's answers for both agents, from each conversation alone (so any
    number of attempts may run at once): the oracle writes the reference, then finishes;
    the no-op finishes."""
    writes = oracle_steps(task.reference())[0]

    def respond(call: Call) -> Step:
        if call.model == f"cogolf-{ORACLE}" and not _answered(call):
            return writes
        return FINISH

    return respond


@dataclass(frozen=True)
class Verdict:
    agent: str
    passed: bool
    status: str
    points: float | None
    why: str


def judge(agent: str, doc: dict[str, Any] | None, cause: str) -> Verdict:
    if doc is None:
        return Verdict(agent, False, "void", None, cause)
    a = doc["agent"]
    status, points = a["status"], a["points"]
    if agent == ORACLE:
        ok = status == "ok" and points == 1.0
        why = "" if ok else f"the reference scored {points} ({status}), not full marks"
    else:
        ok = status == "no_change" and a["patch_bytes"] == 0
        why = "" if ok else f"no change was expected, got {status}"
    return Verdict(agent, ok, status, points, why)


def with_time(spec: AgentSpec, seconds: float) -> AgentSpec:
    return replace(spec, time_limit=seconds)
