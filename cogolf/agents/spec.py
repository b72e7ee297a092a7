"""An agent entrant: what runs (a command-line agent or the built-in one), on which model,
with which limits. Read from an agent file (`cogolf agent run --agent AGENT.toml`) or a
night entrant's `agent = {...}` table, strictly: every mistake names its field.

    command = "{python} -m my_agent --prompt {prompt_file}"   # omitted: the built-in agent
    llm = "models/x.toml"          # or an inline table (see LLM players)
    max_turns = 60                 # the built-in agent's model calls at most
    readable = ["/opt/my-agent"]   # where the agent is installed (read and executed)
    env = { MY_AGENT_QUIET = "1" }
    time_limit = 1800              # seconds of wall clock per attempt
    max_requests = 200             # budgets, checked by the gateway before each call
    max_tokens = 2000000
    max_cost = 5.0                 # needs the llm's input/output prices
    memory_mb = 4096
    max_processes = 256
    command_timeout = 120          # the built-in agent's limit per command it runs
"""

from __future__ import annotations

import os
import shlex
import tomllib
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from cogolf.agents.meter import Budget, Prices
from cogolf.llm.config import ENV_NAME, LLMConfig, LLMConfigError, from_table, load_config

MAX_FILE_BYTES = 64 << 10
PLACEHOLDERS = ("python", "prompt_file", "workspace", "openai_base_url", "anthropic_base_url",
                "model")
# Set by the harness: an entrant's env may not replace them.
RESERVED_ENV = frozenset({
    "PATH", "HOME", "TMPDIR", "PYTHONPATH", "OPENAI_BASE_URL", "OPENAI_API_KEY",
    "ANTHROPIC_BASE_URL", "ANTHROPIC_API_KEY", "COGOLF_PROMPT_FILE", "COGOLF_TASK",
    "COGOLF_ATTEMPT", "COGOLF_MODEL", "COGOLF_WORKSPACE",
})
FIELDS = ("name", "command", "llm", "max_turns", "readable", "env", "time_limit",
          "max_requests", "max_tokens", "max_cost", "memory_mb", "max_processes",
          "command_timeout")
# (low, high) of each number, inclusive.
BOUNDS: dict[str, tuple[float, float]] = {
    "max_turns": (1, 1000),
    "time_limit": (1, 86400),
    "max_requests": (1, 100_000),
    "max_tokens": (1, 1_000_000_000),
    "max_cost": (0.000001, 1_000_000),
    "memory_mb": (64, 65536),
    "max_processes": (1, 1024),
    "command_timeout": (1, 3600),
}


class AgentSpecError(ValueError):
    """An agent that cannot be run; the message names the file and the field."""


@dataclass(frozen=True)
class AgentSpec:
    name: str
    llm: LLMConfig
    command: tuple[str, ...] = ()  # empty: the built-in agent
    max_turns: int = 60
    readable: tuple[str, ...] = ()
    env: tuple[tuple[str, str], ...] = ()
    time_limit: float = 1800.0
    budget: Budget = field(default_factory=Budget)
    memory_mb: int = 4096
    max_processes: int = 256
    command_timeout: float = 120.0

    @property
    def builtin(self) -> bool:
        return not self.command

    @property
    def prices(self) -> Prices | None:
        i, o = self.llm.input_price_per_mtok, self.llm.output_price_per_mtok
        return Prices(i or 0.0, o or 0.0) if i is not None or o is not None else None


def load_agent(path: Path) -> AgentSpec:
    try:
        with open(path, "rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        if len(data) > MAX_FILE_BYTES:
            raise AgentSpecError(f"{path}: over {MAX_FILE_BYTES} bytes")
        doc = tomllib.loads(data.decode("utf-8"))
    except OSError as exc:
        raise AgentSpecError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except (UnicodeDecodeError, tomllib.TOMLDecodeError) as exc:
        raise AgentSpecError(f"{path}: not valid TOML: {exc}") from None
    return from_agent_table(doc, path.parent, default_name=path.stem, where=str(path))


def from_agent_table(table: Any, base: Path, *, default_name: str = "agent",
                     where: str = "agent") -> AgentSpec:
    """Validate a decoded table; relative paths are anchored at `base`."""
    try:
        return _parse(table, base, default_name)
    except AgentSpecError as exc:
        raise AgentSpecError(f"{where}: {exc}") from None


def _fail(field: str, problem: str) -> AgentSpecError:
    return AgentSpecError(f"{field}: {problem}")


def _number(table: dict[str, Any], key: str, default: float, integer: bool) -> Any:
    value = table.get(key, default)
    low, high = BOUNDS[key]
    if isinstance(value, bool) or not isinstance(value, int | float) or (
            integer and not isinstance(value, int)):
        raise _fail(key, f"must be {'an integer' if integer else 'a number'}")
    if not low <= value <= high:
        raise _fail(key, f"must be within {low:g}..{high:g}, got {value:g}")
    return value


def _parse(table: Any, base: Path, default_name: str) -> AgentSpec:
    if not isinstance(table, dict):
        raise AgentSpecError(f"must be a table, got {type(table).__name__}")
    unknown = sorted(set(table) - set(FIELDS))
    if unknown:
        raise _fail(unknown[0], f"unknown field (known: {', '.join(FIELDS)})")
    name = table.get("name", default_name)
    if not isinstance(name, str) or not name.strip():
        raise _fail("name", "must be a non-empty string")
    if "llm" not in table:
        raise _fail("llm", "required: the model file the agent calls (models/x.toml) or a table")
    llm = _llm(table["llm"], base)
    command = _command(table.get("command"))
    readable = table.get("readable", [])
    if not isinstance(readable, list) or not all(isinstance(p, str) and p for p in readable):
        raise _fail("readable", "must be an array of paths")
    paths = tuple(os.path.abspath(base / p) for p in readable)
    env = table.get("env", {})
    if not isinstance(env, dict) or not all(isinstance(v, str) for v in env.values()):
        raise _fail("env", "must be a table of strings")
    for k in env:
        if not ENV_NAME.match(k):
            raise _fail(f"env.{k}", "not a variable name")
        if k in RESERVED_ENV:
            raise _fail(f"env.{k}", "is set by the harness")
    budget = Budget(
        max_requests=_number(table, "max_requests", 0, True) if "max_requests" in table else None,
        max_tokens=_number(table, "max_tokens", 0, True) if "max_tokens" in table else None,
        max_cost=float(_number(table, "max_cost", 0, False)) if "max_cost" in table else None,
    )
    if budget.max_cost is not None and (llm.input_price_per_mtok is None
                                        or llm.output_price_per_mtok is None):
        raise _fail("max_cost", "needs input_price_per_mtok and output_price_per_mtok in the llm "
                    "config: the gateway checks a call's cost before forwarding it")
    if "max_turns" in table and command:
        raise _fail("max_turns", "is the built-in agent's; a command agent counts its own turns")
    return AgentSpec(
        name=name.strip(), llm=llm, command=command,
        max_turns=_number(table, "max_turns", 60, True), readable=paths,
        env=tuple(sorted(env.items())),
        time_limit=float(_number(table, "time_limit", 1800, False)), budget=budget,
        memory_mb=_number(table, "memory_mb", 4096, True),
        max_processes=_number(table, "max_processes", 256, True),
        command_timeout=float(_number(table, "command_timeout", 120, False)),
    )


def _llm(value: Any, base: Path) -> LLMConfig:
    try:
        if isinstance(value, str):
            return load_config(base / value)
        return from_table(value, "llm")
    except LLMConfigError as exc:
        raise _fail("llm", str(exc)) from None


def _command(value: Any) -> tuple[str, ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise _fail("command", f"cannot split into arguments: {exc}") from None
    elif isinstance(value, list) and all(isinstance(a, str) for a in value):
        argv = list(value)
    else:
        raise _fail("command", "must be a string or an array of strings")
    if not argv:
        raise _fail("command", "is empty")
    for arg in argv:
        try:
            arg.format(**dict.fromkeys(PLACEHOLDERS, ""))
        except (KeyError, IndexError, ValueError):
            names = ", ".join("{" + p + "}" for p in PLACEHOLDERS)
            raise _fail("command", f"{arg!r}: unknown placeholder (known: {names}; a literal "
                        "brace is {{ or }})") from None
    return tuple(argv)
