"""A league night of agents on a project: no Cogolf match, every attempt played by the
entrant's agent through the night's gateway, a table with each attempt's status, tokens,
cost and time, and a rerun that plays nothing again."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.agents.oracle import responder
from cogolf.games.registry import agent_task
from cogolf.llm.fake import FakeProvider
from tests.agents.conftest import CSV_TASK
from tests.llm.helpers import KEY, KEY_ENV

pytestmark = pytest.mark.slow


def night_file(tmp_path: Path, fake: FakeProvider) -> Path:
    def agent(model: str) -> str:
        return (f'agent = {{ max_turns = 5, time_limit = 300, llm = {{ provider = "openai", '
                f'model = "{model}", base_url = "{fake.openai_url}", api_key_env = "{KEY_ENV}", '
                'input_price_per_mtok = 1.0, output_price_per_mtok = 2.0 } }\n')
    path = tmp_path / "agents.toml"
    path.write_text(f'name = "agents"\nseed = 7\nholes = 1\nparallel = 2\n'
                    f'[project]\ntasks = ["{CSV_TASK}"]\nattempts = 2\n'
                    f'[[entrant]]\nname = "oracle"\n{agent("cogolf-oracle")}'
                    f'[[entrant]]\nname = "noop"\n{agent("night-noop")}')
    return path


def league(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", "league", *args], cwd=cwd,
                          capture_output=True, text=True, timeout=900,
                          env={"PATH": "/usr/bin:/bin", KEY_ENV: KEY})


def test_a_night_of_agents_on_a_project(tmp_path: Path) -> None:
    with FakeProvider(responder(agent_task(CSV_TASK))) as fake:  # any other model: finish
        night = night_file(tmp_path, fake)
        checked = league("check", str(night), cwd=tmp_path)
        assert checked.returncode == 0, checked.stdout + checked.stderr
        assert "agent oracle" in checked.stdout and "0 matches" in checked.stdout
        done = league("run", str(night), "--replays", "r", "--league-dir", "l", cwd=tmp_path)
        assert done.returncode == 0, done.stdout + done.stderr
        assert len(fake.calls_for("cogolf-oracle")) == 4
        assert {c.key for c in fake.calls} == {KEY}
        standings = json.loads((tmp_path / "l" / "agents" / "standings.json").read_text())
        project = standings["games"]["project"]
        rows = {r["entrant"]: r for r in project["table"]}
        assert rows["oracle"]["total"] == 2.0 and rows["noop"]["total"] == 0.0
        assert rows["oracle"]["cost"] > 0
        first = rows["oracle"]["breakdown"]["csv_importer"][0]["agent"]
        assert first["status"] == "ok" and first["turns"] == 2 and first["seconds"] > 0
        assert rows["noop"]["breakdown"]["csv_importer"][0]["agent"]["status"] == "no_change"
        assert "oracle" in done.stdout and "no_change" in done.stdout
        folder = tmp_path / "r" / "agents" / "project"
        assert (folder / "oracle.csv_importer.1.patch").stat().st_size > 0
        assert KEY not in (folder / "transcripts" / "oracle.csv_importer.1.ndjson").read_text()
        again = league("run", str(night), "--replays", "r", "--league-dir", "l", cwd=tmp_path)
        assert again.returncode == 0, again.stdout + again.stderr
        assert len(fake.calls_for("cogolf-oracle")) == 4  # every attempt kept
