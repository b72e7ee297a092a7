"""A league night on Ray (local Ray, two workers): the agents' attempts run as tasks on
the workers through each worker's own gateway, their results, patches and transcripts
come back to the driver's night folder, as do the LLM seats' transcripts of the Cogolf
matches; a rerun keeps every finished attempt and runs a half-run one again."""

from __future__ import annotations

import asyncio
import io
import json
import os
import socket
import stat
from dataclasses import replace
from pathlib import Path

import pytest

from cogolf.agents.gateway import Gateway
from cogolf.agents.oracle import responder
from cogolf.agents.spec import from_agent_table
from cogolf.game import JobFault
from cogolf.games.registry import agent_task
from cogolf.league.checks import check_night
from cogolf.league.night import parse_night
from cogolf.league.ray_agents import AgentBack, AgentJob, bring_back, play_on_worker
from cogolf.league.runner import RunOptions, run_night
from cogolf.llm.fake import Call, FakeProvider, Step, pedant_responder
from cogolf.llm.usage import night_usage
from tests.agents.conftest import CSV_TASK
from tests.llm.helpers import KEY, KEY_ENV, all_text

SEAT_MODEL = "gpt-fake"


def night_file(tmp_path: Path, fake: FakeProvider) -> Path:
    def llm(model: str) -> str:
        return (f'{{ provider = "openai", model = "{model}", base_url = "{fake.openai_url}", '
                f'api_key_env = "{KEY_ENV}", input_price_per_mtok = 1.0, '
                'output_price_per_mtok = 2.0 }')

    path = tmp_path / "rayagents.toml"
    path.write_text(
        'name = "rayagents"\nseed = 7\nholes = 1\nparallel = 2\nexecutor = "ray"\n'
        f'[project]\ntasks = ["{CSV_TASK}"]\nattempts = 1\n'
        f'[[entrant]]\nname = "gpt"\nllm = {llm(SEAT_MODEL)}\n'
        '[[entrant]]\nname = "literalist"\npolicy = "literalist"\n'
        f'[[entrant]]\nname = "oracle"\nagent = {{ max_turns = 5, time_limit = 300, '
        f'llm = {llm("cogolf-oracle")} }}\n'
        f'[[entrant]]\nname = "noop"\nagent = {{ max_turns = 5, time_limit = 300, '
        f'llm = {llm("night-noop")} }}\n')
    return path


def private(path: Path) -> bool:
    return stat.S_IMODE(path.stat().st_mode) == 0o600 and not path.is_symlink()


@pytest.mark.slow
def test_a_ray_nights_agents_and_llm_seats_come_back_to_the_driver(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
) -> None:
    pytest.importorskip("ray")
    from cogolf.league.ray_executor import RayAttempt

    # The operator's key, in the environment the workers start from: only gateways hold it.
    monkeypatch.setenv(KEY_ENV, KEY)
    agents, seats = responder(agent_task(CSV_TASK)), pedant_responder()

    def respond(call: Call) -> Step:
        return seats(call) if call.model == SEAT_MODEL else agents(call)

    with FakeProvider(respond) as fake:
        night = parse_night(night_file(tmp_path, fake))
        deck = check_night(night)
        options = RunOptions(replays_root=tmp_path / "r", league_root=tmp_path / "l")
        folder = tmp_path / "r" / "rayagents"
        project = folder / "project"
        with RayAttempt(None, 2) as attempt:
            first = asyncio.run(run_night(night, deck, options, io.StringIO(), attempt=attempt,
                                          in_flight=64, agents=attempt.agents))
            assert first.void == [] and len(first.outcomes) == 2
            assert sorted(first.solo.played) == ["project noop csv_importer attempt 1",
                                                 "project oracle csv_importer attempt 1"]
            rows = {r["entrant"]: r for r in first.standings["games"]["project"]["table"]}
            assert rows["oracle"]["total"] == 1.0 and rows["noop"]["total"] == 0.0
            assert rows["oracle"]["cost"] > 0
            oracle = rows["oracle"]["breakdown"]["csv_importer"][0]["agent"]
            assert oracle["status"] == "ok" and oracle["turns"] == 2
            result = json.loads((project / "oracle.csv_importer.1.json").read_text())
            assert result["agent"]["walled"] and result["agent"]["status"] == "ok"
            assert rows["noop"]["breakdown"]["csv_importer"][0]["agent"]["status"] == "no_change"
            # Each attempt's files are on the driver: its patch and its transcript (0600).
            patch = project / "oracle.csv_importer.1.patch"
            assert patch.stat().st_size > 0
            transcripts = project / "transcripts"
            assert stat.S_IMODE(transcripts.stat().st_mode) == 0o700
            for who in ("oracle", "noop"):
                path = transcripts / f"{who}.csv_importer.1.ndjson"
                assert private(path) and '"kind"' in path.read_text()
            # The LLM seat's transcripts of both matches came back with their replays.
            seat_files = sorted((folder / "llm").glob("*.ndjson"))
            assert len(seat_files) == 2 and all(private(p) for p in seat_files)
            usage = night_usage(folder)
            assert usage is not None
            (gpt,) = usage["entrants"]
            assert (gpt["entrant"], gpt["matches"], gpt["turns"]) == ("gpt", 2, 2)
            assert gpt["input_tokens"] > 0 and gpt["cost"] > 0
            oracle_calls = len(fake.calls_for("cogolf-oracle"))
            noop_calls = len(fake.calls_for("night-noop"))
            assert (oracle_calls, noop_calls) == (2, 1)

            # A driver lost before the oracle's result was written: its attempt runs again
            # from scratch (a new patch and transcript); the finished one is kept, and so
            # are the matches.
            (project / "oracle.csv_importer.1.json").unlink()
            patch.write_bytes(b"stale")
            (transcripts / "oracle.csv_importer.1.ndjson").write_text("stale\n")
            again = asyncio.run(run_night(night, deck, options, io.StringIO(), attempt=attempt,
                                          in_flight=64, agents=attempt.agents))
            assert sorted(again.skipped) == sorted(first.outcomes) and again.outcomes == {}
            assert again.solo.played == ["project oracle csv_importer attempt 1"]
            assert again.solo.skipped == ["project noop csv_importer attempt 1"]
            assert len(fake.calls_for("cogolf-oracle")) == 2 * oracle_calls
            assert len(fake.calls_for("night-noop")) == noop_calls
            assert patch.read_bytes() != b"stale"
            assert "stale" not in (transcripts / "oracle.csv_importer.1.ndjson").read_text()
            rows = {r["entrant"]: r for r in again.standings["games"]["project"]["table"]}
            assert rows["oracle"]["total"] == 1.0
        # Both runs' three attempts and two matches ran on the workers, none on the driver.
        assert attempt.stats["agent_attempts"] == 3 and attempt.stats["matches"] == 2
    assert {c.key for c in fake.calls} == {KEY}
    leaks = [str(p) for p, data in all_text(tmp_path) if KEY.encode() in data]
    assert not leaks
    assert os.environ[KEY_ENV] == KEY  # the key was there, and reached no file


def test_a_worker_without_the_tasks_files_voids_the_attempt_naming_itself(
    tmp_path: Path, fake: FakeProvider, gateway: Gateway,
) -> None:
    """The task's files must be on the worker's machine: an attempt that finds them
    missing comes back as a fault naming the worker, and the driver keeps nothing."""
    real = agent_task(CSV_TASK)
    # Its template as a path that is on the driver's machine only.
    task = replace(real, task=replace(real.task, template=tmp_path / "elsewhere"))  # type: ignore[attr-defined]
    spec = from_agent_table({"llm": {"provider": "openai", "model": "night-noop",
                                     "base_url": fake.openai_url, "api_key_env": KEY_ENV}},
                            tmp_path)
    scratch = tmp_path / "worker"
    scratch.mkdir()
    job = AgentJob(task, spec, "noop.csv_importer.1.json", "noop", 1)
    back = asyncio.run(play_on_worker(job, scratch, gateway))
    assert back.summary is None and back.retry
    assert back.fault.startswith(f"on Ray worker {socket.gethostname()}: FileNotFoundError")
    assert list(scratch.iterdir()) == []  # the worker's folder for it is gone
    night = tmp_path / "night" / "project"
    with pytest.raises(JobFault, match="on Ray worker"):
        bring_back(back, night / job.name)
    assert not night.exists()


def test_the_driver_names_every_file_it_brings_back_and_writes_none_through_a_link(
    tmp_path: Path,
) -> None:
    night = tmp_path / "project"
    (night / "transcripts").mkdir(parents=True)
    outside = tmp_path / "outside"
    outside.write_text("untouched")
    planted = night / "transcripts" / "a.t.1.ndjson"
    planted.symlink_to(outside)
    (night / "a.t.1.patch").symlink_to(outside)
    back = AgentBack("agent ok", result=b'{"agent": {}}\n', patch=b"diff\n",
                     transcript=b'{"kind": "request"}\n')
    assert bring_back(back, night / "a.t.1.json") == "agent ok"
    assert outside.read_text() == "untouched"
    assert private(planted) and planted.read_bytes() == back.transcript
    assert (night / "a.t.1.patch").read_bytes() == b"diff\n"
    assert (night / "a.t.1.json").read_bytes() == back.result
    # No patch sent (a harness error has none): none is left from an earlier try.
    assert bring_back(AgentBack("ok", result=b"{}"), night / "a.t.1.json") == "ok"
    assert not (night / "a.t.1.patch").exists()
