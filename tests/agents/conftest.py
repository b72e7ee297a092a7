"""Shared by the agent tests: the fake provider, one gateway, the CSV importer task and
agents written as small scripts (command-line agents, walled like any other)."""

from __future__ import annotations

import os
import shutil
import tempfile
import textwrap
from collections.abc import Iterator
from pathlib import Path

import pytest

from cogolf.agents.gateway import Gateway
from cogolf.agents.spec import AgentSpec, from_agent_table
from cogolf.game import AgentTask
from cogolf.games.registry import agent_task
from cogolf.llm.fake import FakeProvider
from tests.llm.helpers import KEY, KEY_ENV

REPO = Path(__file__).resolve().parents[2]
CSV_TASK = REPO / "references" / "projects" / "csv_importer"


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    os.environ[KEY_ENV] = KEY  # the operator's key: only the gateway may ever hold it
    with FakeProvider() as provider:
        yield provider


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with Gateway() as gw:
        yield gw


@pytest.fixture(scope="module")
def csv_task() -> AgentTask:
    return agent_task(CSV_TASK)


@pytest.fixture(scope="module")
def agents_dir() -> Iterator[Path]:
    """A folder every uid can read, for agent scripts (`readable` names it); not below
    pytest's own temporary folder, which other sessions keep at mode 0700."""
    folder = Path(tempfile.mkdtemp(prefix="cogolf-test-agents-"))
    os.chmod(folder, 0o755)
    yield folder
    shutil.rmtree(folder, ignore_errors=True)


def script_agent(folder: Path, name: str, source: str, fake: FakeProvider, *,
                 model: str | None = None, **limits: object) -> AgentSpec:
    """A command-line agent running `source` with the walled `{python}`."""
    path = folder / f"{name}.py"
    path.write_text(textwrap.dedent(source))
    os.chmod(path, 0o644)
    table = {"name": name, "command": ["{python}", str(path)], "readable": [str(folder)],
             "llm": {"provider": "openai", "model": model or name, "base_url": fake.openai_url,
                     "api_key_env": KEY_ENV},
             "time_limit": 60, **limits}
    return from_agent_table(table, folder)
