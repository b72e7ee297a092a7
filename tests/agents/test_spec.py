"""Agent files: every field's bound pinned (the last value accepted, the first refused),
and every mistake named by its field."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import pytest

from cogolf.agents.spec import BOUNDS, AgentSpecError, from_agent_table, load_agent

LLM = {"provider": "openai", "model": "m", "input_price_per_mtok": 1.0,
       "output_price_per_mtok": 1.0}


def spec(**fields: Any) -> Any:
    return from_agent_table({"llm": LLM, **fields}, Path("/tmp"))


@pytest.mark.parametrize("field", sorted(BOUNDS))
def test_every_bound_is_pinned(field: str) -> None:
    low, high = BOUNDS[field]
    integer = field != "max_cost" and field not in ("time_limit", "command_timeout")
    step = 1 if integer else 1e-6
    for value in (low, high):
        spec(**{field: int(value) if integer else value})
    for value in (low - step, high + step):
        with pytest.raises(AgentSpecError, match=f"{field}: must be within"):
            spec(**{field: int(value) if integer else value})


@pytest.mark.parametrize(("fields", "message"), [
    ({"llm": None}, "llm"),
    ({"nope": 1}, "nope: unknown field"),
    ({"command": ""}, "command: is empty"),
    ({"command": "run {secret}"}, "unknown placeholder"),
    ({"command": "x", "max_turns": 3}, "max_turns: is the built-in agent's"),
    ({"env": {"OPENAI_API_KEY": "k"}}, "env.OPENAI_API_KEY: is set by the harness"),
    ({"env": {"1X": "v"}}, "not a variable name"),
    ({"readable": "/opt"}, "readable: must be an array"),
    ({"max_turns": True}, "max_turns: must be an integer"),
    ({"llm": {"provider": "openai", "model": "m", "api_key": "sk-x"}}, "never goes in a file"),
])
def test_mistakes_name_their_field(fields: dict[str, Any], message: str) -> None:
    table = {"llm": LLM, **fields}
    if table["llm"] is None:
        del table["llm"]
    with pytest.raises(AgentSpecError, match=message):
        from_agent_table(table, Path("/tmp"), where="agent.toml")


def test_max_cost_needs_prices_and_files_are_read_strictly(tmp_path: Path) -> None:
    with pytest.raises(AgentSpecError, match="max_cost: needs input_price_per_mtok"):
        from_agent_table({"llm": {"provider": "openai", "model": "m"}, "max_cost": 1.0},
                         tmp_path)
    (tmp_path / "m.toml").write_text('provider = "anthropic"\nmodel = "c"\n')
    (tmp_path / "a.toml").write_text('llm = "m.toml"\nmax_turns = 9\nreadable = ["opt"]\n')
    agent = load_agent(tmp_path / "a.toml")
    assert (agent.name, agent.llm.provider, agent.max_turns, agent.builtin) == \
        ("a", "anthropic", 9, True)
    assert agent.readable == (str(tmp_path / "opt"),)
    (tmp_path / "big.toml").write_text("#" * (64 << 10) + "\n")
    with pytest.raises(AgentSpecError, match="over 65536 bytes"):
        load_agent(tmp_path / "big.toml")
    (tmp_path / "bad.toml").write_text("llm = [\n")
    with pytest.raises(AgentSpecError, match="not valid TOML"):
        load_agent(tmp_path / "bad.toml")
