"""A match fixes the hash seed of its programs, from its seed: set order is the same in
the match, in `replay --verify` and in `play --from`, each a process of its own, and in
both seat orders of a pairing, which share a seed but not a match id."""

from __future__ import annotations

import asyncio
import hashlib
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

from cogolf.bots.policy import load_policy
from cogolf.deck import load
from cogolf.engine.match import MatchConfig, hash_seed_for
from cogolf.engine.results import MATCH_HASH_SEEDS
from cogolf.replay import read_replay
from cogolf.runtime.local import run_match
from cogolf.runtime.seats import InProcessSeat
from cogolf.sandbox import make_sandbox

# Plays the literalist's tests with an implementation whose answer is the iteration
# order of a set of strings: what each shot observes depends on the hash seed.
POLICY = """
from cogolf.bots.policy import load_policy

_literalist = load_policy("literalist")
IMPL = (
    "def {fn}(*args):\\n"
    "    return ','.join({{'ash', 'basil', 'cedar', 'dill', 'elm', 'fern', 'gorse'}})\\n"
)


def play(observation):
    chosen = _literalist(observation)
    fn = observation["spec"]["signature"]["function"]
    return {**chosen, "impl": IMPL.format(fn=fn)}
"""
SEATS = ("literalist", "orderly.py:play")  # short: names are capped


def id_hash_seed(match_id: str) -> int:
    """The hash seed matches were given before it came from the seed: from the id."""
    digest = hashlib.sha256(b"cogolf-hash-seed\0" + match_id.encode()).digest()
    return MATCH_HASH_SEEDS[digest[0] % len(MATCH_HASH_SEEDS)]


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def verdicts(path: Path) -> list[tuple[str, str, int, str, str]]:
    """Every verdict by who wrote the test and whose code it hit, not by seat."""
    replay = read_replay(path)
    names = replay.header.names
    return sorted(
        (names[e.slot], names[e.target_slot], e.idx, e.outcome, e.observed)
        for e in replay.events
        if type(e).__struct_config__.tag == "test_verdict"
    )


def play(tmp_path: Path, match_id: str, seed: int, seats: tuple[str, str]) -> Path:
    played = cli(
        "play", "--in-process", "--seed", str(seed), "--holes", "1",
        "--seat0", seats[0], "--seat1", seats[1],
        "--match-id", match_id, "--replays", str(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert played.returncode == 0, played.stderr
    return tmp_path / f"{match_id}.ndjson"


@pytest.mark.slow
def test_both_seat_orders_of_one_seed_get_the_same_verdicts_everywhere(tmp_path: Path) -> None:
    (tmp_path / "orderly.py").write_text(POLICY)
    # Under the old derivation these two ids had different hash seeds.
    assert id_hash_seed("hs-a") != id_hash_seed("hs-b")
    first = play(tmp_path, "hs-a", 3, SEATS)
    mirror = play(tmp_path, "hs-b", 3, (SEATS[1], SEATS[0]))
    for path in (first, mirror):
        assert read_replay(path).header.config["hash_seed"] == hash_seed_for(3)
    seen = verdicts(first)
    assert any(o.startswith('"') and "," in o for *_, o in seen), seen  # the set's order
    assert verdicts(mirror) == seen
    checked = cli("replay", str(first), "--verify")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    again = cli(
        "play", "--from", str(first), "--seat0", SEATS[0], "--seat1", SEATS[1],
        "--match-id", "hs-a-again", "--replays", str(tmp_path), cwd=tmp_path,
    )  # fmt: skip
    assert again.returncode == 0, again.stderr
    assert verdicts(tmp_path / "hs-a-again.ndjson") == seen
    # Another seed, another hash seed: the order really does depend on it.
    assert hash_seed_for(1) != hash_seed_for(3)
    other = play(tmp_path, "hs-c", 1, SEATS)
    orders = {o for path in (first, other) for *_, o in verdicts(path) if "," in o}
    assert len(orders) == 2, orders


async def _play_with(path: Path, config: MatchConfig, policies: list[Any]) -> None:
    sandbox = make_sandbox("fork")
    try:
        seats = [InProcessSeat(i, p) for i, p in enumerate(policies)]
        await run_match(load(), config, path.stem, seats, sandbox, path, start_sandbox=True)
    finally:
        await sandbox.close()


@pytest.mark.slow
def test_a_replay_whose_hash_seed_came_from_its_id_still_verifies(tmp_path: Path) -> None:
    """A replay written when the hash seed came from the match id records that seed;
    verify runs the programs with the recorded one, whatever the seed would give now."""
    (tmp_path / "orderly.py").write_text(POLICY)
    old = id_hash_seed("old")
    assert old != hash_seed_for(4)
    path = tmp_path / "old.ndjson"
    config = MatchConfig(seed=4, holes=1, names=("literalist", "orderly"), hash_seed=old)
    policies = [load_policy("literalist"), load_policy(f"{tmp_path / 'orderly.py'}:play")]
    asyncio.run(_play_with(path, config, policies))
    assert read_replay(path).header.config["hash_seed"] == old
    assert any("," in o for *_, o in verdicts(path))
    checked = cli("replay", str(path), "--verify")
    assert checked.returncode == 0, checked.stdout + checked.stderr
    # The recorded seed is the one used: the seed's own would not give these verdicts.
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    header["config"]["hash_seed"] = hash_seed_for(4)
    compact = json.dumps(header, separators=(",", ":"), ensure_ascii=False)
    path.write_text("\n".join([compact, *lines[1:]]) + "\n")
    checked = cli("replay", str(path), "--verify")
    assert checked.returncode != 0 and "observed" in checked.stdout + checked.stderr


def test_a_replay_from_before_hash_seeds_still_verifies(tmp_path: Path) -> None:
    played = cli("play", "--in-process", "--seed", "4", "--holes", "2", "--match-id", "old",
                 "--replays", str(tmp_path))  # fmt: skip
    assert played.returncode == 0, played.stderr
    path = tmp_path / "old.ndjson"
    lines = path.read_text().splitlines()
    header = json.loads(lines[0])
    del header["config"]["hash_seed"]
    compact = json.dumps(header, separators=(",", ":"), ensure_ascii=False)
    path.write_text("\n".join([compact, *lines[1:]]) + "\n")
    checked = cli("replay", str(path), "--verify")
    assert checked.returncode == 0, checked.stdout + checked.stderr
