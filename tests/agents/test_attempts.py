"""Attempts from a fresh workspace to a score, with command-line agents: the contract
they see, every status, and what is snapshotted (a real walled run, a real scorer)."""

from __future__ import annotations

import asyncio
import json
import os
import stat
from pathlib import Path

import pytest

from cogolf.agents.attempt import run_attempt
from cogolf.agents.gateway import Gateway
from cogolf.agents.workspace import BadPatch, fresh, snapshot
from cogolf.game import AgentTask
from cogolf.llm.fake import FakeProvider, Step
from tests.agents.conftest import CSV_TASK, script_agent
from tests.llm.helpers import KEY

pytestmark = pytest.mark.slow

SOLUTION = (CSV_TASK / "solution" / "contacts_import.py").read_text()

CONTRACT_AGENT = """
import json, os, pathlib, openai
env = {k: os.environ.get(k) for k in ("COGOLF_TASK", "COGOLF_ATTEMPT", "COGOLF_MODEL",
       "OPENAI_BASE_URL", "ANTHROPIC_BASE_URL", "HOME")}
prompt = pathlib.Path(os.environ["COGOLF_PROMPT_FILE"]).read_text()
client = openai.OpenAI()   # the base URL and the attempt's token come from the environment
reply = client.chat.completions.create(model="anything", messages=[{"role": "user",
                                       "content": prompt}])
pathlib.Path("contacts_import.py").write_text(reply.choices[0].message.content)
print(json.dumps({"env": env, "key": os.environ["OPENAI_API_KEY"][:7],
                  "git": os.path.isdir(".git"), "prompt": "## How this attempt works" in prompt}))
"""


def attempt(task: AgentTask, spec: object, gateway: Gateway, out: Path, n: int = 1) -> dict:
    return asyncio.run(run_attempt(task, spec, gateway, out, entrant="t", attempt=n))  # type: ignore[arg-type]


def test_a_command_agent_sees_the_contract_and_scores_through_the_project_path(
        fake: FakeProvider, gateway: Gateway, csv_task: AgentTask, agents_dir: Path,
        tmp_path: Path) -> None:
    spec = script_agent(agents_dir, "contract", CONTRACT_AGENT, fake)
    fake.script("contract", Step(SOLUTION))
    doc = attempt(csv_task, spec, gateway, tmp_path)
    a = doc["agent"]
    seen = json.loads(a["output_tail"].strip().splitlines()[-1])
    assert seen["env"]["COGOLF_TASK"] == "csv_importer" and seen["env"]["COGOLF_ATTEMPT"] == "1"
    assert seen["env"]["COGOLF_MODEL"] == "contract"
    assert seen["env"]["OPENAI_BASE_URL"] == gateway.openai_url
    assert seen["key"] == "cogolf-" and seen["git"] and seen["prompt"]
    assert (doc["game"], doc["status"], doc["points"]) == ("project", "ok", 1.0)
    assert (a["status"], a["exit_code"], a["turns"], a["walled"]) == ("ok", 0, 1, True)
    assert a["input_tokens"] > 0 and a["output_tokens"] > 0
    patch = tmp_path / "t.csv_importer.1.patch"
    assert a["patch"] == patch.name and b"+++ b/contacts_import.py" in patch.read_bytes()
    transcript = tmp_path / "transcripts" / "t.csv_importer.1.ndjson"
    assert stat.S_IMODE(os.stat(transcript).st_mode) == 0o600
    assert KEY not in transcript.read_text()
    assert fake.calls_for("contract")[-1].key == KEY  # the real key, from the gateway only


@pytest.mark.parametrize(("source", "limits", "status"), [
    ("import sys; sys.exit(3)", {}, "agent_exit:3"),
    ("import time; time.sleep(600)", {"time_limit": 2}, "timeout"),
    ("import pathlib; pathlib.Path('contacts_import.py').write_text('x = 1\\n')\n"
     "import sys; sys.exit(1)", {}, "agent_exit:1"),
    ("import os; os.symlink('/etc/passwd', 'contacts_import.py.bak')", {}, "bad_patch"),
    ("pass", {}, "no_change"),
])
def test_statuses(fake: FakeProvider, gateway: Gateway, csv_task: AgentTask,
                  agents_dir: Path, tmp_path: Path, source: str, limits: dict,
                  status: str) -> None:
    name = "status-" + status.replace(":", "-")
    doc = attempt(csv_task, script_agent(agents_dir, name, source, fake, **limits), gateway,
                  tmp_path)
    assert doc["agent"]["status"] == status, doc["agent"]["output_tail"]
    assert doc["points"] == 0.0
    if status == "agent_exit:1":  # what it left is still scored
        assert doc["status"] not in ("no_change", "bad_changes")  # the evaluator ran on it
    if status == "bad_patch":
        assert "symbolic link" in doc["agent"]["error"] and doc["status"] == "bad_changes"
    if status == "timeout":
        assert doc["agent"]["seconds"] < 20


def test_a_budget_ends_the_attempt_and_what_was_left_is_scored(
        fake: FakeProvider, gateway: Gateway, csv_task: AgentTask, agents_dir: Path,
        tmp_path: Path) -> None:
    source = """
    import pathlib, time, openai
    client = openai.OpenAI(max_retries=0)
    for n in range(100):
        try:
            client.chat.completions.create(model="m", messages=[{"role": "user", "content": "go"}])
        except openai.BadRequestError:
            time.sleep(600)  # refused: the harness ends the attempt, not the agent
        pathlib.Path("contacts_import.py").write_text(f"N = {n}\\n")
    """
    doc = attempt(csv_task, script_agent(agents_dir, "budget", source, fake, max_requests=3),
                  gateway, tmp_path)
    a = doc["agent"]
    assert (a["status"], a["requests"]) == ("limit:requests", 3)
    assert a["seconds"] < 30 and len(fake.calls_for("budget")) == 3
    assert doc["status"] == "empty_report"  # the workspace as left (N = 2) was scored
    assert b"N = 2" in (tmp_path / "t.csv_importer.1.patch").read_bytes()


def test_nothing_outlives_the_agent_and_the_workspace_is_read_after_the_kill(
        fake: FakeProvider, gateway: Gateway, csv_task: AgentTask, agents_dir: Path,
        tmp_path: Path) -> None:
    source = """
    import os, pathlib, signal, time
    pathlib.Path("contacts_import.py").write_text("EARLY = 1\\n")
    if os.fork() == 0:
        os.setsid()
        if os.fork() == 0:  # a double fork, deaf to SIGTERM, editing after its parent exits
            signal.signal(signal.SIGTERM, signal.SIG_IGN)
            time.sleep(1.5)
            pathlib.Path("contacts_import.py").write_text("LATE = 1\\n")
            pathlib.Path("late.txt").write_text("late")
            time.sleep(600)
        os._exit(0)
    """
    doc = attempt(csv_task, script_agent(agents_dir, "daemon", source, fake), gateway, tmp_path)
    patch = (tmp_path / "t.csv_importer.1.patch").read_bytes()
    assert doc["agent"]["status"] == "ok"
    assert b"EARLY = 1" in patch and b"LATE" not in patch and b"late.txt" not in patch


def test_snapshot_bounds_and_what_a_patch_holds(tmp_path: Path) -> None:
    template = tmp_path / "template"
    template.mkdir()
    (template / "a.txt").write_text("a\n")
    (template / "gone.txt").write_text("gone\n")
    (template / "tool.sh").write_text("echo\n")
    ws = tmp_path / "ws"
    fresh(template, ws)
    (ws / "gone.txt").unlink()
    (ws / "a.txt").rename(ws / "b.txt")
    os.chmod(ws / "tool.sh", 0o755)
    (ws / "blob.bin").write_bytes(bytes(range(256)))
    (ws / ".git" / "hooks" / "pre-commit").write_text("#!/bin/sh\ntouch /tmp/pwned\n")
    patch = tmp_path / "p.patch"
    assert snapshot(ws, template, patch) > 0
    text = patch.read_text()
    assert "deleted file mode" in text and "rename from a.txt" in text
    assert "new mode 100755" in text and "GIT binary patch" in text and ".git" not in text
    # the bounds on the workspace's bytes and the patch's: the last accepted, the first refused
    ws2 = tmp_path / "ws2"
    fresh(template, ws2)
    cap = 4096
    room = cap - sum(p.stat().st_size for p in ws2.iterdir() if p.is_file())
    (ws2 / "big").write_bytes(b"x" * room)
    size = snapshot(ws2, template, patch, max_bytes=cap)
    assert snapshot(ws2, template, patch, max_bytes=cap, max_patch_bytes=size) == size
    with pytest.raises(BadPatch, match=f"the cap is {size - 1}"):
        snapshot(ws2, template, patch, max_bytes=cap, max_patch_bytes=size - 1)
    (ws2 / "big").write_bytes(b"x" * (room + 1))
    with pytest.raises(BadPatch, match=f"more than {cap} bytes"):
        snapshot(ws2, template, patch, max_bytes=cap)
