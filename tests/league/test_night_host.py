"""A night on one server with pooled bots: the same replays as a server per match, and a
bot that dies before connecting costs its own start-up, not a timeout."""

from __future__ import annotations

import asyncio
import io
import json
import time
from pathlib import Path

from cogolf.league.botwall import bot_python
from cogolf.league.checks import check_night
from cogolf.league.executors import run_jobs
from cogolf.league.host import NightHost
from cogolf.league.night import parse_night
from cogolf.league.runner import RunOptions, run_night
from cogolf.league.schedule import schedule
from cogolf.messages import WALL_CLOCK_FIELDS
from cogolf.replay import read_replay

NIGHT = """\
name = "{name}"
seed = 7
holes = {holes}
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "hybrid"
policy = "cogolf.league.sample_bots:Hybrid"

[[entrant]]
name = "{third}"
command = {command}
"""


def write(bot_dir: Path, name: str, holes: int, third: str, command: list[str]) -> Path:
    path = bot_dir / f"{name}.toml"
    path.write_text(NIGHT.format(name=name, holes=holes, third=third,
                                 command=json.dumps(command)))
    return path


def records(path: Path) -> list[str]:
    """Each line of a complete replay, byte for byte except its wall-clock fields."""
    replay = read_replay(path)
    assert replay.result is not None

    def strip(doc: object) -> object:
        if isinstance(doc, dict):
            return {k: strip(v) for k, v in doc.items() if k not in WALL_CLOCK_FIELDS}
        return [strip(v) for v in doc] if isinstance(doc, list) else doc

    return [json.dumps(strip(json.loads(line))) for line in path.read_bytes().splitlines()]


def test_one_server_and_pooled_bots_play_the_replays_of_a_server_per_match(
    tmp_path: Path, bot_dir: Path
) -> None:
    command = [bot_python(), "-m", "cogolf", "bot", "--url", "{url}", "--policy", "pedant"]
    night = parse_night(write(bot_dir, "same", 2, "procbot", command))
    jobs = schedule(night, check_night(night).digest)
    old = asyncio.run(run_jobs(jobs, tmp_path / "old", parallel=2))  # a server per match

    async def hosted() -> tuple[dict[str, object], int]:
        async with NightHost(tmp_path / "new") as host:
            out = await run_jobs(jobs, tmp_path / "new", attempt=host.play, parallel=2)
            return dict(out), host.bot_starts

    new, starts = asyncio.run(hosted())
    assert all(o.result is not None for o in (*old.values(), *new.values()))
    for job in jobs:
        assert records(tmp_path / "new" / job.replay_name) == records(
            tmp_path / "old" / job.replay_name), job.match_id
    # One process for each policy entrant for the whole night; the command bot keeps its own.
    assert starts == 2
    assert sorted(p.name for p in (tmp_path / "new" / "logs" / "pool").iterdir()) == [
        "hybrid.log", "literalist.log"]
    assert len(list((tmp_path / "new" / "logs").glob("*.procbot.log"))) == 4


def test_a_bot_that_dies_at_start_costs_its_start_up_not_a_timeout(
    tmp_path: Path, bot_dir: Path
) -> None:
    """Each void match is two attempts of a bot that exits at once. Waiting out the other
    bot's 10 s exit grace per attempt cost over 20 s per void match; noticing the exit
    costs about two process starts. The bound is loose for a loaded machine."""
    crash = [bot_python(), "-c", "import sys; print('dying on purpose'); sys.exit(3)"]
    night = parse_night(write(bot_dir, "crash", 1, "crasher", crash))
    deck = check_night(night)
    progress = io.StringIO()
    options = RunOptions(replays_root=tmp_path / "replays", league_root=tmp_path / "league",
                         parallel=1)
    started = time.monotonic()
    run = asyncio.run(run_night(night, deck, options, progress))
    elapsed = time.monotonic() - started
    assert len(run.void) == 4 and len(run.outcomes) == 6
    for mid in run.void:
        outcome = run.outcomes[mid]
        assert outcome.attempts == 2
        assert "before connecting (crasher)" in (outcome.void_cause or "")
        assert "dying on purpose" in (outcome.void_cause or "")
    # Four void matches one at a time, plus two played ones and the standings.
    assert elapsed < 4 * 6.0 + 15.0, elapsed
    last = progress.getvalue().splitlines()[-1]
    assert "6/6 (4 void, 4 retried)" in last


SUICIDAL = """\
import os


def play(observation):
    os._exit(7)  # the whole pooled process goes, mid-match
"""


def test_a_pooled_bot_that_dies_mid_match_costs_fallbacks_and_is_started_again(
    tmp_path: Path, bot_dir: Path
) -> None:
    (bot_dir / "suicidal.py").write_text(SUICIDAL)
    (bot_dir / "night.toml").write_text("""\
name = "dies"
seed = 2
holes = 2
hole_deadline = 1.0
retry_deadline = 0.5
parallel = 1

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "suicidal"
policy = "suicidal.py:play"
""")
    night = parse_night(bot_dir / "night.toml")
    jobs = schedule(night, check_night(night).digest)

    async def hosted() -> tuple[dict[str, object], int]:
        async with NightHost(tmp_path / "r") as host:
            out = await run_jobs(jobs, tmp_path / "r", attempt=host.play, parallel=1)
            return dict(out), host.pools["suicidal"].starts

    outcomes, starts = asyncio.run(hosted())
    # It connected before dying: its holes are the server's fallback, never a void match.
    assert all(o.result is not None for o in outcomes.values())  # type: ignore[attr-defined]
    for job in jobs:
        result = read_replay(tmp_path / "r" / job.replay_name).result
        assert result is not None
        assert result.fallbacks[job.names.index("suicidal")] == 2
    assert starts == 2  # one per match: the next seat found it gone and started another
