"""Hostile agents, each outcome asserted: what the walls keep from an agent (hidden tests,
the reference, the repository and its git, other attempts, the night key, the real key,
every address but the gateway, other processes), a built-in agent driven to misbehave,
edited tests that are put back, a patch leaving the workspace, and a provider that fails."""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from pathlib import Path

import pytest

from cogolf.agents.attempt import run_attempt
from cogolf.agents.gateway import Gateway
from cogolf.agents.meter import Budget, Meter
from cogolf.agents.runs import play
from cogolf.agents.spec import from_agent_table
from cogolf.agents.workspace import BadPatch, apply
from cogolf.game import AgentTask
from cogolf.games.registry import agent_task
from cogolf.llm.fake import FakeProvider, Step, ToolCall
from tests.agents.conftest import CSV_TASK, REPO, script_agent
from tests.cli.run import cogolf
from tests.llm import hostile
from tests.llm.helpers import KEY, KEY_ENV

pytestmark = pytest.mark.slow

PROBE = """
import glob, json, os, socket, sys
targets = json.loads(sys.argv[1])
found = {}
def can_read(name, path):
    try:
        if os.path.isdir(path):
            os.listdir(path)
        else:
            open(path, "rb").read(1)
        found[name] = "READ"
    except OSError as exc:
        found[name] = type(exc).__name__
for name, path in targets["read"].items():
    can_read(name, path)
import cogolf
found["repo_from_package"] = os.path.dirname(os.path.dirname(cogolf.__file__))
can_read("references_via_package", os.path.join(found["repo_from_package"], "references"))
found["other_attempts"] = [p for p in glob.glob("/tmp/cogolf-agent-*") if p not in os.getcwd()]
found["key_in_env"] = any(targets["key"] in v for v in os.environ.values())
for name, port in targets["connect"].items():
    try:
        socket.create_connection(("127.0.0.1", port), timeout=2).close()
        found[name] = "CONNECTED"
    except OSError as exc:
        found[name] = type(exc).__name__
try:
    os.kill(targets["harness_pid"], 15)
    found["kill_harness"] = "KILLED"
except OSError as exc:
    found["kill_harness"] = type(exc).__name__
for name, path in targets["write"].items():
    try:
        open(path, "w").write("x")
        found[name] = "WROTE"
    except OSError as exc:
        found[name] = type(exc).__name__
import openai
try:
    openai.OpenAI(api_key=targets["stale_token"], max_retries=0).models.list()
    found["stale_token"] = "ACCEPTED"
except openai.AuthenticationError:
    found["stale_token"] = "refused"
import subprocess
git = lambda *a: subprocess.run(["git", *a], capture_output=True, text=True).stdout.strip()
found["commits"], found["remotes"] = git("rev-list", "--all", "--count"), git("remote")
print("PROBE " + json.dumps(found))
"""


def attempt(task: AgentTask, spec: object, gateway: Gateway, out: Path) -> dict:
    return asyncio.run(run_attempt(task, spec, gateway, out, entrant="h", attempt=1))  # type: ignore[arg-type]


def test_what_the_walls_keep_from_a_command_agent(fake: FakeProvider, gateway: Gateway,
                                                   csv_task: AgentTask, agents_dir: Path,
                                                   tmp_path: Path) -> None:
    night_key = tmp_path / "night" / ".key"
    night_key.parent.mkdir(mode=0o700)
    night_key.write_bytes(os.urandom(32))
    stale = gateway.grant(csv_task and fake and _config(fake), Meter(Budget()), None)
    gateway.revoke(stale)
    targets = {
        "read": {"hidden_tests": str(CSV_TASK / "evaluator"),
                 "reference": str(CSV_TASK / "solution" / "contacts_import.py"),
                 "repo": str(REPO), "repo_git": str(REPO / ".git" / "HEAD"),
                 "night_key": str(night_key), "proc_harness": f"/proc/{os.getpid()}/environ",
                 "proc_self": "/proc/self/status", "etc_shadow": "/etc/shadow",
                 "root_home": "/root", "tmp": "/tmp"},
        "connect": {"provider": fake.port, "gateway": gateway.port, "ssh": 22},
        "write": {"tmp": "/tmp/cogolf-hostile-probe", "deck": str(REPO / "deck" / "x")},
        "harness_pid": os.getpid(), "key": KEY, "stale_token": stale,
    }
    source = PROBE.replace("json.loads(sys.argv[1])", repr(json.dumps(targets)).join(
        ("json.loads(", ")")))
    doc = attempt(csv_task, script_agent(agents_dir, "probe", source, fake), gateway, tmp_path)
    line = [ln for ln in doc["agent"]["output_tail"].splitlines() if ln.startswith("PROBE ")]
    assert line, doc["agent"]["output_tail"]
    found = json.loads(line[0].removeprefix("PROBE "))
    for name in targets["read"]:
        assert found[name] != "READ", name
    assert found["references_via_package"] != "READ"
    assert found["other_attempts"] == [] and found["key_in_env"] is False
    assert found["gateway"] == "CONNECTED"  # the one address it has
    assert found["provider"] != "CONNECTED" and found["ssh"] != "CONNECTED"
    assert found["kill_harness"] == "PermissionError"
    assert found["tmp"] != "WROTE" and found["deck"] != "WROTE"
    assert found["stale_token"] == "refused"
    assert (found["commits"], found["remotes"]) == ("1", "")  # no history, no remote
    assert not Path("/tmp/cogolf-hostile-probe").exists()


def _config(fake: FakeProvider):  # type: ignore[no-untyped-def]
    from cogolf.llm.config import from_table

    return from_table({"provider": "openai", "model": "stale", "base_url": fake.openai_url,
                       "api_key_env": KEY_ENV})


def test_a_built_in_agent_driven_to_misbehave(fake: FakeProvider, gateway: Gateway,
                                              csv_task: AgentTask, tmp_path: Path) -> None:
    reference = CSV_TASK / "solution" / "contacts_import.py"
    fake.script("misbehave", Step(tool_calls=(
        ToolCall("read_file", {"path": "../../../../../../etc/hostname"}),
        ToolCall("read_file", {"path": str(reference)}),
        ToolCall("run", {"command": f"cat {reference}; ls {REPO}; echo probed"}),
        ToolCall("edit_file", {"path": "contacts_import.py", "old": "def import_contacts",
                               "new": "def import_contacts"}),
        ToolCall("no_such_tool", {}),
        ToolCall("write_file", {"path": "notes.md", "content": "hello"}),
    )), Step(tool_calls=(ToolCall("run", {"command": "ln -s /etc/hostname link"}),)),
        Step(tool_calls=(ToolCall("finish", {}),)))
    spec = from_agent_table({"name": "misbehave", "max_turns": 5, "time_limit": 120,
                             "llm": {"provider": "anthropic", "model": "misbehave",
                                     "base_url": fake.anthropic_url, "api_key_env": KEY_ENV}},
                            tmp_path)
    doc = attempt(csv_task, spec, gateway, tmp_path)
    assert doc["agent"]["status"] == "bad_patch"
    assert "symbolic link" in doc["agent"]["error"]
    assert doc["points"] == 0.0
    results = fake.calls_for("misbehave")[1].body["messages"][-1]["content"]
    texts = [r["content"] for r in results]
    assert "outside the workspace" in texts[0] and "outside the workspace" in texts[1]
    assert "Permission denied" in texts[2] and "probed" in texts[2] and "exit code" in texts[2]
    assert "import csv" not in texts[2]  # the reference's first line never came back
    assert texts[3] == "edited contacts_import.py" and "no tool" in texts[4]


def test_edited_tests_are_put_back_before_scoring(fake: FakeProvider, gateway: Gateway,
                                                  agents_dir: Path, tmp_path: Path) -> None:
    task_dir = tmp_path / "textkit"
    done = cogolf("commit0", "prepare", str(REPO / "references" / "commit0" / "textkit"),
                  "--out", str(task_dir), timeout=600)
    assert done.returncode == 0, done.stderr
    task = agent_task(task_dir, feedback="tests")
    source = """
    import pathlib
    for test in pathlib.Path("tests").glob("test_*.py"):
        test.write_text("def test_anything():\\n    assert True\\n")
    pathlib.Path("tests/conftest.py").write_text("import pytest\\n")
    """
    doc = attempt(task, script_agent(agents_dir, "cheat", source, fake), gateway,
                  tmp_path / "out")
    assert doc["agent"]["status"] == "ok" and doc["agent"]["patch_bytes"] > 0
    assert doc["status"] == "ok" and doc["pass_rate"] == 0.0  # the pristine suite ran


def test_a_patch_that_leaves_the_workspace_is_refused(tmp_path: Path) -> None:
    tree = tmp_path / "tree"
    tree.mkdir()
    (tree / "a.txt").write_text("a\n")
    for path in ("../escape.txt", "/tmp/cogolf-abs-escape.txt"):
        patch = tmp_path / "p.patch"
        patch.write_text(f"diff --git a/{path} b/{path}\nnew file mode 100644\n--- /dev/null\n"
                         f"+++ b/{path}\n@@ -0,0 +1 @@\n+x\n")
        with pytest.raises(BadPatch):
            apply(patch, tree)
    link = tmp_path / "l.patch"
    link.write_text("diff --git a/l b/l\nnew file mode 120000\n--- /dev/null\n+++ b/l\n"
                    "@@ -0,0 +1 @@\n+../../etc/passwd\n\\ No newline at end of file\n"
                    "diff --git a/l/x b/l/x\nnew file mode 100644\n--- /dev/null\n+++ b/l/x\n"
                    "@@ -0,0 +1 @@\n+x\n")
    with pytest.raises(BadPatch):
        apply(link, tree)
    assert not (tmp_path / "escape.txt").exists()
    assert not Path("/tmp/cogolf-abs-escape.txt").exists()


def test_a_failing_provider_voids_the_attempt_never_a_silent_zero(
        gateway: Gateway, csv_task: AgentTask, tmp_path: Path,
        monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    with hostile.HostileProvider(default=hostile.hang_after_headers) as bad:
        spec = from_agent_table({"name": "hung", "max_turns": 3, "time_limit": 120,
                                 "llm": {"provider": "openai", "model": "m",
                                         "base_url": bad.url + "/v1", "api_key_env": KEY_ENV,
                                         "request_timeout": 0.3}}, tmp_path)
        doc, cause = asyncio.run(play(csv_task, spec, gateway, tmp_path, entrant="h",
                                      attempt=1))
    assert doc is None and "the provider failed" in cause
    void = json.loads((tmp_path / "h.csv_importer.1.void.json").read_text())
    assert void["status"] == "void" and void["tries"] == 2
    assert not (tmp_path / "h.csv_importer.1.json").exists()
    shutil.rmtree(tmp_path / "transcripts")
