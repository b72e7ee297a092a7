"""A match fixes the hash seed of its programs: set order is the same in the match,
in `replay --verify` and in `play --from`, each a process of its own."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.engine.match import hash_seed_for
from cogolf.replay import read_replay

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


def cli(*args: str, cwd: Path | None = None) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=cwd,
    )


def observed(path: Path) -> list[tuple[int, int, str, str]]:
    events = read_replay(path).events
    return [
        (e.slot, e.idx, e.outcome, e.observed)
        for e in events
        if type(e).__struct_config__.tag == "test_verdict"
    ]


@pytest.mark.slow
def test_set_order_is_the_same_in_the_match_its_verify_and_its_replay(tmp_path: Path) -> None:
    policy = tmp_path / "orderly.py"
    policy.write_text(POLICY)
    seats = ("--seat0", "literalist", "--seat1", "orderly.py:play")  # short: names are capped
    orders = []
    for match_id in ("hs-a", "hs-b"):
        played = cli(
            "play", "--in-process", "--seed", "3", "--holes", "1", *seats,
            "--match-id", match_id, "--replays", str(tmp_path), cwd=tmp_path,
        )  # fmt: skip
        assert played.returncode == 0, played.stderr
        path = tmp_path / f"{match_id}.ndjson"
        header = read_replay(path).header
        assert header.config["hash_seed"] == hash_seed_for(match_id)
        first = observed(path)
        assert any(o.startswith('"') and "," in o for *_, o in first), first
        checked = cli("replay", str(path), "--verify")
        assert checked.returncode == 0, checked.stdout + checked.stderr
        again = cli(
            "play", "--from", str(path), *seats, "--match-id", f"{match_id}-again",
            "--replays", str(tmp_path), cwd=tmp_path,
        )  # fmt: skip
        assert again.returncode == 0, again.stderr
        replayed = tmp_path / f"{match_id}-again.ndjson"
        assert read_replay(replayed).header.config["hash_seed"] == header.config["hash_seed"]
        assert observed(replayed) == first
        orders.append(first)
    # Two matches have two hash seeds: the order really does depend on it.
    assert orders[0] != orders[1]


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
