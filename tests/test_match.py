"""Whole matches: in process and through the CLI, deterministic, strict UTF-8 journals."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys

from cogolf.bots.policy import load_policy
from cogolf.deck import DEFAULT_DECK as DECK_DIR
from cogolf.deck import DEFAULT_REFERENCES as REFS_DIR
from cogolf.deck import load
from cogolf.engine import rules
from cogolf.engine.match import MatchConfig
from cogolf.replay import read_replay, without_wall_clock
from cogolf.runtime.local import run_match
from cogolf.runtime.seats import InProcessSeat
from cogolf.sandbox import make_sandbox
from cogolf.scorecard import render

DECK = load()


def play_in_process(path, seat0="literalist", seat1="pedant", seed=0, holes=9, match_id="m"):
    config = MatchConfig(seed=seed, holes=holes, names=(seat0, seat1))

    async def main():
        sandbox = make_sandbox("fork")
        try:
            seats = [InProcessSeat(0, load_policy(seat0)), InProcessSeat(1, load_policy(seat1))]
            return await run_match(DECK, config, match_id, seats, sandbox, path, start_sandbox=True)
        finally:
            await sandbox.close()

    return asyncio.run(main())


def stripped(path):
    return [without_wall_clock(r) for r in [read_replay(path).header, *read_replay(path).events]]


def test_a_full_match_in_process(tmp_path):
    result = play_in_process(tmp_path / "a.ndjson")
    assert result.reason == "complete" and result.holes_played == 9
    assert result.scores[0] == -result.scores[1]
    assert sum(h[0] for h in result.hole_scores) == result.scores[0]
    assert result.breaches_taken == [result.breaches[1], result.breaches[0]]
    assert result.illegal_tests[0] == 0 and result.illegal_tests[1] > 0  # literalist vs pedant
    replay = read_replay(tmp_path / "a.ndjson")
    kinds = [e.__struct_config__.tag for e in replay.events]
    assert kinds.count("hole_start") == 9 and kinds.count("hole_score") == 9
    assert kinds.count("test_verdict") == sum(result.tests_fired) + sum(result.illegal_tests)
    header = replay.header
    assert header.deck_digest == DECK.digest and header.holes == DECK.draw(0, 9)
    assert "token" not in json.dumps(header.config)
    card = render(replay)
    assert "killer test" in card and "Ash" in card and "Basil" in card


def test_same_seed_same_bots_same_replay(tmp_path):
    play_in_process(tmp_path / "a.ndjson", seed=4, holes=4)
    play_in_process(tmp_path / "b.ndjson", seed=4, holes=4)
    assert stripped(tmp_path / "a.ndjson") == stripped(tmp_path / "b.ndjson")
    play_in_process(tmp_path / "c.ndjson", seed=5, holes=4)
    assert stripped(tmp_path / "a.ndjson") != stripped(tmp_path / "c.ndjson")


def test_every_line_is_strict_utf8_even_at_the_caps(tmp_path):
    path = tmp_path / "edgy.ndjson"
    result = play_in_process(path, seat0="tests/bots/edgy.py:at_the_caps", holes=3)
    assert result.reason == "complete"
    assert result.fallbacks == [0, 0]
    raw = path.read_bytes()
    for line in raw.splitlines():
        json.loads(line.decode("utf-8", errors="strict"))
    subs = [
        e
        for e in read_replay(path).events
        if e.__struct_config__.tag == "submission" and e.slot == 0
    ]
    for sub in subs:
        assert len(sub.note) == rules.MAX_NOTE_CHARS and "\ufffd" in sub.note
        assert sub.tests[0].name == "名" * rules.MAX_NAME_CHARS
        assert sub.tests[0].why.startswith("\ufffd")
        assert sub.tests[1].name == "x" * rules.MAX_NAME_CHARS
        assert sub.dropped_tests == 2  # seven tests sent, five kept
        assert len(sub.impl) == rules.MAX_IMPL_CHARS


def test_cli_play_over_websockets_then_from_replay(tmp_path):
    def cli(*args):
        return subprocess.run(
            [sys.executable, "-m", "cogolf", *args], capture_output=True, text=True, timeout=300
        )

    first = cli(
        "play", "--seed", "9", "--holes", "3", "--match-id", "one", "--replays", str(tmp_path)
    )
    assert first.returncode == 0, first.stderr
    assert "killer test" in first.stdout and "replay:" in first.stdout
    again = cli(
        "play",
        "--from",
        str(tmp_path / "one.ndjson"),
        "--match-id",
        "two",
        "--replays",
        str(tmp_path),
    )
    assert again.returncode == 0, again.stderr
    a, b = stripped(tmp_path / "one.ndjson"), stripped(tmp_path / "two.ndjson")
    # Same seed, deck, config and bots: the same match, apart from its id.
    assert a[0]["match_id"] == "one" and b[0]["match_id"] == "two"
    a[0].pop("match_id"), b[0].pop("match_id")
    assert a == b
    checked = cli("replay", str(tmp_path / "two.ndjson"), "--verify")
    assert checked.returncode == 0 and "verified: 3 holes" in checked.stdout


def test_deck_check_passes_on_the_core_pack():
    out = subprocess.run(
        [sys.executable, "-m", "cogolf", "deck", "check"],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 0, out.stdout + out.stderr
    assert "12 specs, ok" in out.stdout


def test_deck_check_finds_a_broken_pack(tmp_path):
    import shutil

    deck_dir, refs = tmp_path / "deck" / "core", tmp_path / "references" / "core"
    shutil.copytree(DECK_DIR, deck_dir)
    shutil.copytree(REFS_DIR, refs)
    hidden = refs / "truncate" / "hidden.json"
    doc = json.loads(hidden.read_text())
    doc["par"][0]["expect"] = "surely not this"
    hidden.write_text(json.dumps(doc))
    # the pedant now plays the literalist's implementation: they can no longer breach each other
    (deck_dir / "sort_names" / "pedant.py").write_text(
        (deck_dir / "sort_names" / "literalist.py").read_text()
    )
    out = subprocess.run(
        [sys.executable, "-m", "cogolf", "deck", "check", str(deck_dir)],
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert out.returncode == 1
    assert "FAIL truncate: par case 0" in out.stdout
    assert "FAIL sort_names:" in out.stdout
