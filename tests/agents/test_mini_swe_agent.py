"""A real third-party agent: mini-swe-agent, pinned, from PyPI into a venv of its own,
edits a task through the gateway against the fake provider and is scored.

The venv is made once per machine (about a minute and ~750 MB) in a folder every uid can
read; CI makes it in this test, as a developer's machine does on first run."""

from __future__ import annotations

import asyncio
import os
import shutil
import subprocess
from pathlib import Path

import pytest

from cogolf.agents.attempt import run_attempt
from cogolf.agents.gateway import Gateway
from cogolf.agents.spec import from_agent_table
from cogolf.game import AgentTask
from cogolf.llm.fake import FakeProvider, Step, ToolCall
from cogolf.sandbox.reachable import bot_python
from tests.agents.conftest import CSV_TASK
from tests.llm.helpers import KEY, KEY_ENV

pytestmark = [pytest.mark.slow, pytest.mark.network]

VERSION = "2.4.6"
MINI = Path("/var/cache/cogolf") / f"mini-swe-agent-{VERSION}"
DONE = "COMPLETE_TASK_AND_SUBMIT_FINAL_OUTPUT"  # mini-swe-agent's own end of a task


@pytest.fixture(scope="module")
def mini() -> Path:
    marker = MINI / ".cogolf-installed"
    if marker.exists():
        return MINI
    shutil.rmtree(MINI, ignore_errors=True)
    MINI.parent.mkdir(parents=True, exist_ok=True)
    os.chmod(MINI.parent, 0o755)
    try:
        subprocess.run([bot_python(), "-m", "venv", str(MINI)], check=True, timeout=300)
        subprocess.run([str(MINI / "bin" / "pip"), "install", "-q", "--disable-pip-version-check",
                        f"mini-swe-agent=={VERSION}"], check=True, timeout=1800)
    except (OSError, subprocess.SubprocessError) as exc:
        if os.environ.get("CI"):
            raise
        pytest.skip(f"cannot install mini-swe-agent {VERSION}: {exc}")
    marker.write_text(VERSION)
    return MINI


def test_mini_swe_agent_edits_a_task_through_the_gateway(
        mini: Path, fake: FakeProvider, gateway: Gateway, csv_task: AgentTask,
        tmp_path: Path) -> None:
    solution = (CSV_TASK / "solution" / "contacts_import.py").read_text()
    write = f"cat > contacts_import.py <<'COGOLF_EOF'\n{solution}COGOLF_EOF"
    fake.script("mini-model",
                Step("Writing the importer.", tool_calls=(ToolCall("bash", {"command": write}),)),
                Step("Done.", tool_calls=(ToolCall("bash", {"command": f"echo {DONE}"}),)))
    # Its own venv, not this installation's packages: PYTHONPATH is unset for it.
    run = (f"unset PYTHONPATH; exec {mini}/bin/mini -y --exit-immediately -c mini.yaml "
           "-c model.model_kwargs.api_base={openai_base_url} -m openai/{model} "
           '-o "$HOME/trajectory.json" -t "$(cat {prompt_file})"')
    spec = from_agent_table({
        "name": "mini", "command": ["/bin/sh", "-c", run], "readable": [str(mini)],
        "time_limit": 600, "max_requests": 20,
        "env": {"MSWEA_CONFIGURED": "true", "MSWEA_COST_TRACKING": "ignore_errors",
                "MSWEA_SILENT_STARTUP": "1", "LITELLM_LOCAL_MODEL_COST_MAP": "True",
                "LITELLM_TELEMETRY": "False", "NO_COLOR": "1"},
        "llm": {"provider": "openai", "model": "mini-model", "base_url": fake.openai_url,
                "api_key_env": KEY_ENV},
    }, tmp_path)
    doc = asyncio.run(run_attempt(csv_task, spec, gateway, tmp_path, entrant="mini",
                                  attempt=1))
    a = doc["agent"]
    assert (a["status"], doc["points"]) == ("ok", 1.0), a["output_tail"][-3000:]
    calls = fake.calls_for("mini-model")
    assert len(calls) == 2 == a["requests"] and {c.key for c in calls} == {KEY}
    assert [t["function"]["name"] for t in calls[0].body["tools"]] == ["bash"]
    assert a["walled"] is True and a["input_tokens"] > 0
