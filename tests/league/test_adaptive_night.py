"""`schedule = "adaptive"`: the night file's bounds, the choice of pairings, a real night
played within its budget through the CLI, its plan grown batch by batch, and its resume."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.league.adaptive import batch_pairings, next_jobs
from cogolf.league.night import NightError, parse_night
from cogolf.league.planfile import load_plan
from cogolf.league.proof import night_key
from cogolf.league.schedule import schedule

NIGHT = """\
name = "{name}"
seed = 11
holes = 1
parallel = 2
{extra}
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
name = "parrot"
policy = "cogolf.league.sample_bots:parrot"
"""


def night_file(tmp: Path, extra: str, name: str = "adapt") -> Path:
    path = tmp / f"{name}.toml"
    path.write_text(NIGHT.format(name=name, extra=extra))
    return path


@pytest.mark.parametrize(
    ("extra", "problem"),
    [
        ('schedule = "swiss"', ":5: schedule: 'swiss': expected one of round-robin, adaptive"),
        ('schedule = "adaptive"', 'schedule = "adaptive" needs a match budget: budget = N'),
        ("budget = 4", ':5: budget: only used with schedule = "adaptive"'),
        ('schedule = "adaptive"\nbudget = 5', ":6: budget: must be even"),
        ('schedule = "adaptive"\nbudget = 1', ":6: budget: must be between 2 and 4032, got 1"),
        ('schedule = "adaptive"\nbudget = 14', ":6: budget: at most 12 (the round-robin's"),
        ('schedule = "adaptive"\nbudget = "all"', ":6: budget: must be an integer, got str"),
    ],
)
def test_the_night_file_bounds_the_adaptive_schedule(
    tmp_path: Path, extra: str, problem: str
) -> None:
    with pytest.raises(NightError) as exc:
        parse_night(night_file(tmp_path, extra))
    assert problem in str(exc.value)


@pytest.mark.parametrize("budget", [2, 12])  # the first and the last budget accepted
def test_budgets_from_one_pairing_to_the_whole_round_robin_are_accepted(
    tmp_path: Path, budget: int
) -> None:
    night = parse_night(night_file(tmp_path, f'schedule = "adaptive"\nbudget = {budget}'))
    assert (night.schedule, night.budget) == ("adaptive", budget)
    assert parse_night(night_file(tmp_path, "", "plain")).schedule == "round-robin"


def test_pairings_are_the_round_robins_each_chosen_once_with_both_legs(tmp_path: Path) -> None:
    night = parse_night(night_file(tmp_path, 'schedule = "adaptive"\nbudget = 12'))
    full = schedule(night, "digest")
    assert batch_pairings(1) == 1 and batch_pairings(5) == 2
    chosen: list = []
    assert next_jobs(full, chosen, {}, room=1, pairings=3) == []  # no room for both legs
    first = next_jobs(full, chosen, {}, room=12, pairings=2)
    assert len(first) == 4 and len({n for j in first for n in j.names}) == 4
    while batch := next_jobs(full, chosen, {}, room=12 - len(chosen), pairings=2):
        assert len(batch) % 2 == 0
        for a, b in zip(batch[::2], batch[1::2], strict=True):
            assert a.names == b.names[::-1] and a.seed == b.seed  # both seat orders, one seed
        chosen += batch
    assert sorted(j.match_id for j in chosen) == sorted(j.match_id for j in full)


def cogolf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args],
        capture_output=True,
        text=True,
        cwd=cwd,
        timeout=300,
        check=False,
    )


@pytest.mark.slow
def test_an_adaptive_night_plays_its_budget_signing_each_batch_before_it_plays(
    tmp_path: Path,
) -> None:
    path = night_file(tmp_path, 'schedule = "adaptive"\nbudget = 6')
    check = cogolf("league", "check", str(path), cwd=tmp_path)
    assert check.returncode == 0 and "adaptive schedule: 6 of these matches" in check.stdout
    run = cogolf("league", "run", str(path), "--json", cwd=tmp_path)
    assert run.returncode == 0, run.stderr
    game = json.loads(run.stdout)["games"]["cogolf"]
    assert game["matches"] == {"scheduled": 6, "played": 6, "void": 0, "unplayed": []}
    assert sum(r["matches"] for r in game["table"]) == 12
    night_dir = tmp_path / "replays" / "adapt"
    plan = load_plan(night_dir, night_key(night_dir))
    assert plan is not None and len(plan.matches) == 6
    # An empty plan first, then one pairing per batch (parallel 2), each signed in turn.
    assert sorted(p.revision for p in plan.matches) == [2, 2, 3, 3, 4, 4]
    pairs = [frozenset(p.names) for p in plan.matches]
    assert len(set(pairs)) == 3
    replays = sorted(p.name for p in night_dir.glob("*.ndjson"))
    assert replays == sorted(f"{p.match_id}.ndjson" for p in plan.matches)
    again = cogolf("league", "run", str(path), "--json", cwd=tmp_path)
    assert again.returncode == 0, again.stderr
    assert json.loads(again.stdout)["games"]["cogolf"]["matches"]["played"] == 6
    plan_again = load_plan(night_dir, night_key(night_dir))
    assert plan_again == plan  # the budget was spent: nothing more is chosen
