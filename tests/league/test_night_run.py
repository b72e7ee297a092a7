"""Real nights: real matches in the real sandbox, through the CLI and the runner."""

from __future__ import annotations

import asyncio
import io
import json
import os
import signal
import subprocess
import sys
import time
from dataclasses import replace
from pathlib import Path

import pytest

from cogolf.league.botwall import bot_python
from cogolf.league.checks import check_night
from cogolf.league.executors import play_with_retry, run_jobs
from cogolf.league.jobs import MatchJob
from cogolf.league.night import parse_night
from cogolf.league.planfile import PLAN_NAME, PlanError
from cogolf.league.play import play_match
from cogolf.league.runner import RunOptions, run_night
from cogolf.league.schedule import schedule
from cogolf.replay import read_replay, without_wall_clock

ROOT = Path(__file__).resolve().parents[2]

FOUR = """\
name = "{name}"
seed = 11
holes = {holes}
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "pedant"
policy = "pedant"

[[entrant]]
name = "hybrid"
policy = "cogolf.league.sample_bots:Hybrid"

[[entrant]]
name = "{fourth}"
policy = "{fourth_policy}"
"""

SLOW_BOT = """\
import time

from cogolf.bots.scripted import scripted_policy

_literalist = scripted_policy("literalist")


def play(observation):
    time.sleep(0.2)
    return _literalist(observation)
"""


def write_night(tmp: Path, name: str, holes: int = 2, fourth: str = "parrot") -> Path:
    policy = "cogolf.league.sample_bots:parrot" if fourth == "parrot" else "slow.py:play"
    path = tmp / f"{name}.toml"
    path.write_text(FOUR.format(name=name, holes=holes, fourth=fourth, fourth_policy=policy))
    return path


def cogolf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args], capture_output=True, text=True, cwd=cwd
    )


def complete_replays(directory: Path) -> dict[str, bytes]:
    out = {}
    for path in sorted(directory.glob("*.ndjson")):
        try:
            if read_replay(path).complete:
                out[path.name] = path.read_bytes()
        except ValueError:
            continue
    return out


def test_four_entrant_night_end_to_end(tmp_path: Path):
    night_file = write_night(tmp_path, "e2e")
    run = cogolf("league", "run", str(night_file), "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    doc = json.loads(run.stdout)
    game = doc["games"]["cogolf"]
    assert game["matches"] == {"scheduled": 12, "played": 12, "void": 0, "unplayed": []}
    assert len(complete_replays(tmp_path / "replays" / "e2e")) == 12
    table = game["table"]
    assert sorted(r["name"] for r in table) == ["hybrid", "literalist", "parrot", "pedant"]
    assert all(r["matches"] == 6 for r in table)
    assert sum(r["margin"] for r in table) == 0
    assert game["ratings"]["anchor"] == "literalist"
    # Plain progress lines (stderr is not a terminal), one per match.
    assert sum(1 for line in run.stderr.splitlines() if line.startswith("match e2e-")) == 12
    # Every replay is the scheduled match: its seed and seats.
    night = parse_night(night_file)
    for job in schedule(night, check_night(night).digest):
        replay = read_replay(tmp_path / "replays" / "e2e" / job.replay_name)
        assert replay.header.seed == job.seed and replay.header.names == list(job.names)
        assert len(replay.header.holes) == 2
    published = (tmp_path / "league" / "e2e" / "standings.json").read_bytes()
    again = cogolf("league", "standings", "replays/e2e/", "--out", "again.json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert (tmp_path / "again.json").read_bytes() == published
    assert "Ratings (Bradley-Terry" in again.stdout and "Head to head" in again.stdout


def test_an_interrupted_night_resumes_and_keeps_finished_replays(tmp_path: Path, bot_dir: Path):
    (bot_dir / "slow.py").write_text(SLOW_BOT)  # read by its bot, which runs unprivileged
    night_file = write_night(bot_dir, "resume", fourth="slow")
    replays = tmp_path / "replays" / "resume"
    env = {**os.environ, "PYTHONPATH": str(ROOT)}
    proc = subprocess.Popen(
        [sys.executable, "-m", "cogolf", "league", "run", str(night_file), "--parallel", "1"],
        cwd=tmp_path,
        env=env,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
    )
    try:
        deadline = time.monotonic() + 120
        while len(complete_replays(replays)) < 3 and proc.poll() is None:
            assert time.monotonic() < deadline, "the night never got going"
            time.sleep(0.05)
        proc.send_signal(signal.SIGINT)
        _, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 130, err
    before = complete_replays(replays)
    assert 3 <= len(before) < 12
    # An edited replay no longer verifies, so it is played again rather than kept.
    edited = sorted(before)[0]
    lines = before.pop(edited).splitlines()
    at = next(i for i, line in enumerate(lines) if b'"kind":"test_verdict"' in line)
    verdict = json.loads(lines[at])
    verdict["observed"] = "edited"
    lines[at] = json.dumps(verdict, separators=(",", ":")).encode()
    (replays / edited).write_bytes(b"\n".join(lines) + b"\n")

    night = parse_night(night_file)
    deck = check_night(night)
    options = RunOptions(replays_root=tmp_path / "replays", league_root=tmp_path / "league")
    result = asyncio.run(run_night(night, deck, options, io.StringIO()))
    assert sorted(f"{mid}.ndjson" for mid in result.skipped) == sorted(before)
    assert len(result.outcomes) == 12 - len(before)
    assert edited.removesuffix(".ndjson") in result.outcomes
    after = complete_replays(replays)
    assert len(after) == 12
    assert all(after[name] == data for name, data in before.items())
    assert result.standings["games"]["cogolf"]["matches"]["played"] == 12


def test_a_match_that_cannot_be_played_is_void_after_one_retry(tmp_path: Path):
    night = parse_night(write_night(tmp_path, "void", holes=1))
    deck = check_night(night)
    good, bad = schedule(night, deck.digest)[:2]
    # The pack on disk is not the one this job was scheduled with: an infrastructure failure.
    bad = replace(bad, deck_digest="sha256:" + "0" * 64)
    outcomes = asyncio.run(run_jobs([bad, good], tmp_path / "r", parallel=2))
    assert list(outcomes) == sorted([good.match_id, bad.match_id])
    assert outcomes[good.match_id].result is not None and outcomes[good.match_id].attempts == 1
    void = outcomes[bad.match_id]
    assert void.result is None and void.attempts == 2
    assert void.void_cause is not None
    assert (
        "attempt 1: PlayError: the pack at" in void.void_cause and "attempt 2:" in void.void_cause
    )

    unknown_sandbox = replace(good, sandbox="nonesuch")
    out = asyncio.run(play_with_retry(unknown_sandbox, tmp_path / "r", play_match))
    assert out.result is None and "unknown sandbox mode 'nonesuch'" in (out.void_cause or "")


def test_void_matches_are_recorded_never_scored_and_played_again(tmp_path: Path):
    night = parse_night(write_night(tmp_path, "voidnight", holes=1))
    deck = check_night(night)
    options = RunOptions(replays_root=tmp_path / "replays", league_root=tmp_path / "league")
    stale = replace(deck, digest="sha256:" + "1" * 64)
    first = asyncio.run(run_night(night, stale, options, io.StringIO()))
    game = first.standings["games"]["cogolf"]
    assert len(first.void) == 12 and game["matches"]["played"] == 0
    assert len(game["void"]) == 12 and all("PlayError" in v["cause"] for v in game["void"])
    assert all(r["matches"] == 0 and r["points"] == 0 and r["void"] == 6 for r in game["table"])
    assert len(list((tmp_path / "replays" / "voidnight").glob("*.void.json"))) == 12
    # The pack is part of the plan: a night planned with another one is refused...
    with pytest.raises(PlanError, match="deck_digest 'sha256:1111"):
        asyncio.run(run_night(night, deck, options, io.StringIO()))
    # ...until its plan is removed; then the void matches are played again.
    (tmp_path / "replays" / "voidnight" / PLAN_NAME).unlink()
    second = asyncio.run(run_night(night, deck, options, io.StringIO()))
    assert second.void == [] and len(second.outcomes) == 12
    assert second.standings["games"]["cogolf"]["matches"]["void"] == 0
    assert list((tmp_path / "replays" / "voidnight").glob("*.void.json")) == []


def test_bench_prints_matches_per_second(tmp_path: Path):
    out = cogolf("league", "bench", "--entrants", "3", "--holes", "1", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    numbers = json.loads(out.stdout)
    assert numbers["matches"] == 6 and numbers["played"] == 6 and numbers["void"] == 0
    assert numbers["matches_per_second"] > 0 and numbers["total_seconds"] > 0
    assert list(tmp_path.iterdir()) == []


def test_bench_refuses_ray_with_a_process_per_seat(tmp_path: Path):
    out = cogolf("league", "bench", "--entrants", "3", "--executor", "ray",
                 "--process-per-seat", cwd=tmp_path)
    assert out.returncode == 2
    assert "--process-per-seat is for the local executor only" in out.stderr
    assert "Traceback" not in out.stderr and list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_bench_on_ray_starts_a_server_per_worker_not_per_match(tmp_path: Path):
    pytest.importorskip("ray")
    out = cogolf("league", "bench", "--entrants", "3", "--holes", "1", "--parallel", "2",
                 "--executor", "ray", "--json", cwd=tmp_path)
    assert out.returncode == 0, out.stderr
    numbers = json.loads(out.stdout)
    assert numbers["executor"] == "ray" and numbers["played"] == 6 and numbers["void"] == 0
    assert 1 <= numbers["time"]["servers_started"] <= 2
    assert numbers["time"]["bot_processes_started"] <= 3 * 2
    assert list(tmp_path.iterdir()) == []


@pytest.mark.slow
def test_ray_night_plays_on_a_server_per_worker_the_replays_of_the_local_executor(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
):
    pytest.importorskip("ray")
    from cogolf.league import ray_executor
    from cogolf.league.ray_executor import RayAttempt

    checked: list[str] = []

    def counted(policy: str, deck_dir: Path) -> str | None:
        checked.append(policy)
        return real(policy, deck_dir)

    real = ray_executor.policy_problem
    monkeypatch.setattr(ray_executor, "policy_problem", counted)

    night = parse_night(write_night(tmp_path, "rayed", holes=1))
    night = replace(night, entrants=night.entrants[:3])
    deck = check_night(night)
    local = RunOptions(replays_root=tmp_path / "local", league_root=tmp_path / "local-league")
    rayed = RunOptions(replays_root=tmp_path / "ray", league_root=tmp_path / "ray-league")
    a = asyncio.run(run_night(night, deck, local, io.StringIO()))
    with RayAttempt(None, 2) as attempt:
        b = asyncio.run(run_night(night, deck, rayed, io.StringIO(), attempt=attempt, in_flight=64))
    assert b.void == [] and len(b.outcomes) == 6
    assert a.standings_path.read_bytes() == b.standings_path.read_bytes()
    # Each entrant's policy was loaded once for the night, by the driver, not per match.
    assert sorted(checked) == sorted(e.policy for e in night.entrants)
    # Two workers: at most one server each, and one bot process per entrant per worker.
    assert attempt.stats["workers"] == 2 and attempt.stats["matches"] == 6
    assert 1 <= attempt.stats["server_starts"] <= 2
    assert attempt.stats["bot_starts"] <= 3 * 2
    replays = complete_replays(tmp_path / "ray" / "rayed")
    assert len(replays) == 6
    local_replays = complete_replays(tmp_path / "local" / "rayed")
    assert {n: wall_clock_free(r) for n, r in replays.items()} == {
        n: wall_clock_free(r) for n, r in local_replays.items()}


@pytest.mark.slow
def test_a_ray_worker_killed_mid_night_is_restarted_and_no_match_is_lost(tmp_path: Path):
    ray = pytest.importorskip("ray")
    from cogolf.league.ray_executor import RayAttempt

    night = parse_night(write_night(tmp_path, "killed", holes=1))
    night = replace(night, entrants=night.entrants[:3])
    deck = check_night(night)
    local = RunOptions(replays_root=tmp_path / "local", league_root=tmp_path / "local-league")
    rayed = RunOptions(replays_root=tmp_path / "ray", league_root=tmp_path / "ray-league")
    a = asyncio.run(run_night(night, deck, local, io.StringIO()))
    killed: list[object] = []
    with RayAttempt(None, 2) as attempt:

        async def killing(job: MatchJob, replays_dir: Path) -> Path:
            path = await attempt(job, replays_dir)
            if not killed:  # the worker, its server and its bots go; it may be mid-match
                killed.append(attempt._workers[0])
                ray.kill(attempt._workers[0], no_restart=False)
            return path

        b = asyncio.run(run_night(night, deck, rayed, io.StringIO(), attempt=killing,
                                  in_flight=64))
    assert killed and b.void == [] and len(b.outcomes) == 6
    assert a.standings_path.read_bytes() == b.standings_path.read_bytes()
    assert attempt.stats["workers"] == 2  # the restarted worker closed cleanly too


def wall_clock_free(replay: bytes) -> list[object]:
    """Each line of a replay without the fields that differ between identical runs."""
    return [without_wall_clock(json.loads(line)) for line in replay.splitlines()]


def command_night(tmp: Path, name: str, env_command: str) -> Path:
    """Three entrants: a policy, a bot process given {url}, a bot process reading COGOLF_URL.

    Bot processes run unprivileged, so they use an interpreter every user can run."""
    python = json.dumps(bot_python())
    path = tmp / f"{name}.toml"
    path.write_text(
        f"""\
name = "{name}"
seed = 5
holes = 1
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "procbot"
command = [{python}, "-m", "cogolf", "bot", "--url", "{{url}}", "--policy", "pedant"]

[[entrant]]
name = "envbot"
command = "{env_command}"
"""
    )
    return path


def test_command_entrants_are_bot_processes_on_the_seat_url(tmp_path: Path, bot_dir: Path):
    night = parse_night(command_night(bot_dir, "cmd", f"{bot_python()} -m cogolf bot"))
    jobs = schedule(night, check_night(night).digest)
    outcomes = asyncio.run(run_jobs(jobs, tmp_path / "r", parallel=2))
    assert len(outcomes) == 6
    assert all(o.result is not None for o in outcomes.values())
    for job in jobs:
        replay = read_replay(tmp_path / "r" / job.replay_name)
        # Every seat, process or policy, answered the hole itself over its websocket.
        assert replay.result is not None and replay.result.fallbacks == [0, 0]


def test_a_bot_command_that_cannot_start_voids_the_match(tmp_path: Path, bot_dir: Path):
    night = parse_night(command_night(bot_dir, "bad", "/nonexistent/bot --url {url}"))
    jobs = [j for j in schedule(night, check_night(night).digest) if "envbot" in j.names]
    outcomes = asyncio.run(run_jobs(jobs[:1], tmp_path / "r", parallel=1))
    (out,) = outcomes.values()
    assert out.result is None and out.attempts == 2
    assert "cannot start" in (out.void_cause or "")
