"""`cogolf agent check|run|show` as a user runs them: the oracle scores full marks and
the no-op the template's baseline on every shipped task, and a run of the built-in agent
prints a line per attempt, resumes, and shows its transcript."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.agents.oracle import responder
from cogolf.games.registry import agent_task
from cogolf.llm.fake import FakeProvider
from tests.agents.conftest import CSV_TASK, REPO
from tests.cli.run import cogolf
from tests.llm.helpers import KEY, KEY_ENV
from tests.stacks import needs

pytestmark = pytest.mark.slow

PROJECTS = REPO / "references" / "projects"
STACKS = {
    "laravel_csv_import": needs(shutil.which("php") is not None, "Debian's php-cli"),
    "laravel_offline_sync": needs(shutil.which("php") is not None, "Debian's php-cli"),
    "shipping_quotes": needs(shutil.which("go") is not None, "Debian's golang-go"),
    "bank_feed": needs(Path("/usr/bin/chromium").exists(), "Debian's chromium"),
}


@pytest.mark.parametrize("task", [
    pytest.param(t, marks=STACKS.get(t, ())) for t in
    ("csv_importer", "laravel_csv_import", "laravel_offline_sync", "shipping_quotes",
     "bank_feed")])
def test_oracle_and_noop_pass_on_every_shipped_project(task: str, tmp_path: Path) -> None:
    done = cogolf("agent", "check", str(PROJECTS / task), "--out", str(tmp_path), timeout=900)
    assert done.returncode == 0, done.stdout + done.stderr
    assert f"{task} oracle: pass (ok, 1.000 point(s))" in done.stdout
    assert f"{task} no-op: pass (no_change, 0.000 point(s))" in done.stdout
    oracle = json.loads((tmp_path / "oracle" / f"oracle.{task}.1.json").read_text())
    assert oracle["agent"]["walled"] is True and oracle["agent"]["turns"] == 2


def test_oracle_and_noop_on_textkit_with_each_feedback(tmp_path: Path) -> None:
    task = tmp_path / "task"
    done = cogolf("commit0", "prepare", str(REPO / "references" / "commit0" / "textkit"),
                  "--out", str(task), timeout=600)
    assert done.returncode == 0, done.stderr
    for feedback in ("none", "tests"):
        done = cogolf("agent", "check", str(task), "--feedback", feedback, "--out",
                      str(tmp_path / feedback), timeout=600)
        assert done.returncode == 0, done.stdout + done.stderr
        assert "textkit oracle: pass (ok, 1.000 point(s))" in done.stdout
        assert "textkit no-op: pass (no_change" in done.stdout
    prompt_tests = agent_task(task, feedback="tests").prompt()
    assert "python -m pytest" in prompt_tests
    assert "pytest" not in agent_task(task, feedback="none").prompt()


def test_agent_run_two_attempts_in_parallel_then_resume_and_show(tmp_path: Path,
                                                                 monkeypatch: pytest.MonkeyPatch
                                                                 ) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)
    # the oracle's answers come from each conversation, so parallel attempts get theirs
    with FakeProvider(responder(agent_task(CSV_TASK))) as fake:
        agent = tmp_path / "agent.toml"
        agent.write_text(f'name = "builtin"\nmax_turns = 5\ntime_limit = 300\n'
                         f'[llm]\nprovider = "openai"\nmodel = "cogolf-oracle"\n'
                         f'base_url = "{fake.openai_url}"\napi_key_env = "{KEY_ENV}"\n')
        out = tmp_path / "out"
        args = [sys.executable, "-m", "cogolf", "agent", "run", str(CSV_TASK), "--agent",
                str(agent), "--attempts", "2", "--parallel", "2", "--out", str(out)]
        done = subprocess.run(args, capture_output=True, text=True, timeout=600,
                              env={"PATH": "/usr/bin:/bin", KEY_ENV: KEY})
        assert done.returncode == 0, done.stdout + done.stderr
        for n in (1, 2):
            assert f"csv_importer attempt {n}: ok, 1.000 point(s)" in done.stdout
        assert "total 2.000 of 2" in done.stdout
        assert {c.key for c in fake.calls_for("cogolf-oracle")} == {KEY}
        # `project table` reads the same files
        table = cogolf("project", "table", str(out))
        assert table.returncode == 0 and "builtin" in table.stdout and "2.00" in table.stdout
        again = subprocess.run(args, capture_output=True, text=True, timeout=600,
                               env={"PATH": "/usr/bin:/bin", KEY_ENV: KEY})
        assert again.returncode == 0 and again.stdout.count("(kept)") == 2
        assert len(fake.calls_for("cogolf-oracle")) == 4  # nothing ran again
    shown = cogolf("agent", "show", str(out / "builtin.csv_importer.1.json"))
    assert shown.returncode == 0
    assert "[call write_file]" in shown.stdout and "Harden the contact importer" in shown.stdout
    assert KEY not in shown.stdout
