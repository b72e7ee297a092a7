"""How matches end when things go wrong: artifacts are always complete, nothing is lost."""

from __future__ import annotations

import asyncio
import json
import shutil

import websockets

from cogolf.bots.policy import load_policy
from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES, load
from cogolf.engine.match import MatchConfig
from cogolf.games.registry import LIVE
from cogolf.replay import read_replay
from cogolf.runtime.local import run_match
from cogolf.runtime.seats import InProcessSeat
from cogolf.sandbox import make_sandbox
from cogolf.sandbox.spawn import SpawnSandbox
from tests.polling import until
from tests.server.helpers import create, literalist_play, play_well, recv, running_server

DECK = load()


def play(deck, config, path, sandbox, policies=("literalist", "pedant")):
    async def main():
        seats = [InProcessSeat(i, load_policy(p)) for i, p in enumerate(policies)]
        try:
            return await run_match(deck, config, "m", seats, sandbox, path, start_sandbox=True)
        finally:
            await sandbox.close()

    return asyncio.run(main())


def test_a_sandbox_that_cannot_start_is_a_harness_fault(tmp_path):
    path = tmp_path / "m.ndjson"
    result = play(DECK, MatchConfig(holes=3), path, SpawnSandbox(python="/nonexistent/python3"))
    assert result.reason == "harness_fault" and result.holes_played == 0
    replay = read_replay(path)
    assert replay.result is not None
    end = [e for e in replay.events if e.__struct_config__.tag == "episode_end"]
    assert end and end[0].reason == "harness_fault" and end[0].detail


def test_a_broken_reference_is_a_harness_fault_that_keeps_resolved_holes(tmp_path):
    deck_dir, refs = tmp_path / "deck", tmp_path / "refs"
    shutil.copytree(DEFAULT_DECK, deck_dir)
    shutil.copytree(DEFAULT_REFERENCES, refs)
    keys = load(deck_dir, refs).draw(0, 3)
    (refs / keys[1] / "reference.py").write_text("def solve(:\n")
    deck = load(deck_dir, refs)
    path = tmp_path / "m.ndjson"
    result = play(deck, MatchConfig(holes=3), path, make_sandbox("fork"))
    assert result.reason == "harness_fault"
    assert result.holes_played == 1  # hole 1 resolved and kept; hole 2's reference failed
    assert len(read_replay(path).result.hole_scores) == 1


def test_the_match_wall_budget_ends_with_deadline(tmp_path):
    slow = "tests/bots/misbehaving.py:by_hole"  # hole 2 hangs for 30 s
    config = MatchConfig(
        holes=4, match_deadline_seconds=4.0, hole_deadline_seconds=10, retry_deadline_seconds=10
    )
    path = tmp_path / "m.ndjson"
    result = play(DECK, config, path, make_sandbox("fork"), policies=("literalist", slow))
    assert result.reason == "deadline"
    assert result.holes_played == 1  # hole 1 (policy raised -> fallback) resolved, hole 2 did not
    assert result.fallback_causes[1] == {"host_error": 1}


def test_observations_never_leak_secrets(tmp_path):
    seen = []

    def spy(observation):
        seen.append(json.dumps(observation))
        return load_policy("literalist")(observation)

    async def main():
        sandbox = make_sandbox("fork")
        seats = [InProcessSeat(0, spy), InProcessSeat(1, load_policy("pedant"))]
        try:
            return await run_match(
                DECK,
                MatchConfig(seed=424242, holes=5, names=("Real-0", "Real-1")),
                "m",
                seats,
                sandbox,
                tmp_path / "m.ndjson",
                start_sandbox=True,
            )
        finally:
            await sandbox.close()

    asyncio.run(main())
    assert len(seen) == 5
    pedant_sources = {DECK.public.specs[k].baselines["pedant"].impl for k in DECK.spec_keys()}
    for text in seen:
        assert "Real-0" not in text and "Real-1" not in text and "424242" not in text
        for key in DECK.spec_keys():
            hidden = DECK.hidden[key]
            assert hidden.reference not in text and hidden.ambiguity not in text
        for source in pedant_sources:
            assert json.dumps(source)[1:-1] not in text
    last = json.loads(seen[-1])
    assert len(last["history"]) == 4 and last["hole"] == 5
    entry = last["history"][-1]
    assert {"your_tests", "their_tests", "their_note", "your_par_fails", "their_par_fails"} <= set(
        entry
    )
    assert all("your_result" in t for t in entry["their_tests"])


def test_a_match_that_cannot_resume_ends_as_harness_fault(tmp_path):
    async def one_hole_then_silence(url):
        async with websockets.connect(url) as ws:
            obs = await recv(ws, "observation")
            await ws.send(literalist_play(obs["observation"], obs["hole"]))
            await asyncio.sleep(3600)

    async def first():
        async with running_server(tmp_path) as server:
            match_id, urls = create(server, holes=3, match_id="m1", hole_deadline_seconds=600)
            task = asyncio.create_task(play_well(urls[0]))
            other = asyncio.create_task(one_hole_then_silence(urls[1]))
            hosted = server.registry.get(match_id)
            while not (hosted.match and hosted.match.resolved):
                await asyncio.sleep(0.01)
            task.cancel()
            other.cancel()
        # leaving the block stops the server in hole 2 (seat 1 is silent): no result line

    asyncio.run(first())
    path = tmp_path / "replays" / "m1.ndjson"
    assert read_replay(path).result is None
    deck_dir, refs = tmp_path / "deck", tmp_path / "refs"
    shutil.copytree(DEFAULT_DECK, deck_dir)
    shutil.copytree(DEFAULT_REFERENCES, refs)
    spec = deck_dir / DECK.spec_keys()[0] / "spec.json"
    spec.write_text(spec.read_text().replace('"title": "', '"title": "Changed '))

    async def second():
        from cogolf.server.run import ServeOptions, start_server

        other_deck = load(deck_dir, refs)
        assert other_deck.digest != DECK.digest
        server = await start_server(
            ServeOptions(games=LIVE, data_dir=tmp_path, decks={"core": other_deck}, port=0)
        )
        try:
            hosted = server.registry.get("m1")
            await asyncio.wait_for(hosted.task, 10)
            return hosted.result
        finally:
            await server.stop()

    result = asyncio.run(second())
    assert result.reason == "harness_fault"
    assert result.holes_played >= 1  # the resolved holes are kept, never re-scored
    replay = read_replay(path)
    end = next(e for e in replay.events if e.__struct_config__.tag == "episode_end")
    assert replay.result is not None and "cannot resume" in end.detail


def test_an_unreadable_journal_is_kept_aside_and_the_match_ends_cleanly(tmp_path):
    path = tmp_path / "replays" / "m2.ndjson"

    async def first():
        async with running_server(tmp_path, connect_timeout=60) as server:
            create(server, holes=3, match_id="m2")
            await until(path.exists, "the match's journal is written")

    asyncio.run(first())
    path.write_bytes(b'{"kind": "header", "oops": \xff\n')

    async def second():
        async with running_server(tmp_path) as server:
            hosted = server.registry.get("m2")
            await asyncio.wait_for(hosted.task, 10)
            return hosted.result

    result = asyncio.run(second())
    assert result.reason == "harness_fault"
    assert (tmp_path / "replays" / "m2.ndjson.broken").exists()
    assert read_replay(path).result is not None
