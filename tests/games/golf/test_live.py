"""Live solo golf matches: a real uvicorn on loopback, raw websocket clients, bot processes."""

from __future__ import annotations

import asyncio
import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest
import websockets
from websockets.exceptions import InvalidStatus

from cogolf import cli
from cogolf.games.golf import leaderboard
from cogolf.games.golf.journal import read_golf_replay
from cogolf.games.golf.results import read_results
from cogolf.games.golf.wire import GolfHoleScore, GolfHoleStart, GolfSubmissionRecord
from tests.games.golf.live_helpers import (
    answer,
    create,
    golf_server,
    play_reference,
    recv,
    reference_source,
)
from tests.games.golf.runners import need_racket

POLICIES = Path(__file__).with_name("policies.py")


def records(path: Path, kind: type) -> list[Any]:
    return [e for e in read_golf_replay(path).events if isinstance(e, kind)]


def test_live_match_with_reference_files_scores_every_hole(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with golf_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
            made = await http.post("/matches", json={
                "game": "golf", "course": "python", "names": ["ref-model"],
                "hole_deadline_seconds": 30, "retry_deadline_seconds": 5,
            })
            assert made.status_code == 201, made.text
            doc = made.json()
            assert [s["slot"] for s in doc["seats"]] == [0]
            watch = await websockets.connect(doc["watch_url"])
            snap = await recv(watch)
            assert (snap["type"], snap["game"], snap["status"]) == ("snapshot", "golf", "waiting")
            async with websockets.connect(doc["seats"][0]["url"]) as ws:
                welcome = await recv(ws)
                assert welcome["type"] == "welcome" and welcome["game"] == "golf"
                assert (welcome["course"], welcome["holes"], welcome["slot"]) == ("python", 18, 0)
                assert welcome["hole_deadline_seconds"] == 30
                assert welcome["retry_deadline_seconds"] == 5
                rules = welcome["rules"]
                assert rules["max_source_bytes"] == 65536 and rules["max_message_bytes"] == 16384
                assert rules["per_test_seconds"] > 0 and rules["retries_per_hole"] == 1
                assert "ref-model" not in json.dumps(welcome)
                first = await recv(ws, "observation")
                assert (first["hole"], first["retry"], first["deadline_seconds"]) == (1, False, 30)
                obs = first["observation"]
                assert (obs["game"], obs["course"], obs["hole"], obs["holes"]) == (
                    "golf", "python", 1, 18)
                assert obs["task"]["key"] == "reverse-string"
                assert obs["task"]["signature"] == "def f(s: str) -> str"
                assert obs["task"]["public_tests"] and obs["task"]["difficulty"] == "easy"
                await answer(ws, first)
                assert await recv(ws) == {"type": "ack", "hole": 1, "dropped_tests": 0,
                                          "truncated_fields": []}
                done = await play_reference(ws)
            assert done is not None
            result = done["result"]
            assert result["reason"] == "complete" and result["holes_played"] == 18
            totals = result["document"]["totals"]
            assert totals["holes_passed"] == 18 and totals["tests_passed"] == totals["tests_total"]
            assert totals["penalty"] == 0 and totals["score"] == totals["raw_bytes"]
            seen: list[dict[str, Any]] = []
            while (msg := await recv(watch))["type"] != "done":
                seen.append(msg["event"])
            await watch.close()
            kinds = [e["kind"] for e in seen]
            assert kinds.count("hole_score") == 18 and kinds[-1] == "result"
            # A spectator sees a hole's source only with (right before) its score.
            for i, e in enumerate(seen):
                if e["kind"] == "submission":
                    assert seen[i + 1]["kind"] == "hole_score" and seen[i + 1]["hole"] == e["hole"]
            status = (await http.get(f"/matches/{doc['match_id']}")).json()
            assert status["status"] == "finished" and status["game"] == "golf"
            assert status["scores"] == [totals["score"]] and status["names"] == ["ref-model"]
            listing = (await http.get("/matches")).json()
            assert [m["match_id"] for m in listing] == [doc["match_id"]]
            replay = await http.get(doc["replay_url"].replace(server.url, ""))
            lines = [json.loads(x) for x in replay.text.splitlines()]
            assert lines[0]["kind"] == "header" and lines[0]["game"] == "golf"
            assert lines[-1]["kind"] == "result"
        path = tmp_path / "replays" / f"{doc['match_id']}.ndjson"
        subs = records(path, GolfSubmissionRecord)
        assert [s.hole for s in subs] == list(range(1, 19))
        assert subs[0].source == reference_source("python", obs) and subs[0].origin == "seat"
        assert [s.hole for s in records(path, GolfHoleScore)] == list(range(1, 19))
        loaded = read_results(tmp_path / "results")
        rows = leaderboard.course_board(loaded.docs, "python")
        assert [(r.model, r.holes_passed) for r in rows] == [("ref-model", 18)]
        assert Path(result["result_file"]).is_file()

    asyncio.run(scenario())


def test_malformed_then_silence_falls_back_with_the_full_penalty(tmp_path: Path) -> None:
    async def scenario() -> tuple[str, dict[str, Any]]:
        async with golf_server(tmp_path) as server:
            match_id, url = create(server, names=["sloppy"], hole_deadline_seconds=20,
                                   retry_deadline_seconds=0.5)
            async with websockets.connect(url) as ws:
                first = await recv(ws, "observation")
                assert first["hole"] == 1
                await ws.send('{"type":"submission","hole":1,"source":5}')
                err = await recv(ws)
                assert (err["type"], err["cause"], err["retry"], err["hole"]) == (
                    "error", "malformed", True, 1)
                assert "$.source" in err["message"]
                retry = await recv(ws)
                assert retry["type"] == "observation" and retry["hole"] == 1 and retry["retry"]
                assert retry["deadline_seconds"] == 0.5
                # Say nothing: after the retry deadline the fallback is played.
                second = await recv(ws, "observation")
                assert second["hole"] == 2 and not second["retry"]
                await ws.send('{"type":"submission","hole":7,"source":"f=1"}')
                wrong = await recv(ws)
                assert (wrong["cause"], wrong["retry"]) == ("wrong_hole", False)
                await answer(ws, second)
                assert (await recv(ws))["type"] == "ack"
                third = await recv(ws, "observation")
                await ws.send(json.dumps({"type": "submission", "hole": third["hole"],
                                          "source": None}))  # passing the hole
                done = await play_reference(ws)
            assert done is not None
            await ws.close()
            late = server.registry.get(match_id)
            assert late is not None and late.status == "finished"
            return match_id, done["result"]

    match_id, result = asyncio.run(scenario())
    holes = {h["hole"]: h for h in result["document"]["holes"]}
    for key in ("reverse-string", "count-vowels"):
        assert holes[key]["score"] == 1000.0 and holes[key]["reason"] == "No submission"
        assert holes[key]["status"] == "missing" and holes[key]["bytes"] == 0
    assert holes["sum-digits"]["status"] == "passed"
    assert result["document"]["totals"]["holes_passed"] == 16
    path = tmp_path / "replays" / f"{match_id}.ndjson"
    subs = records(path, GolfSubmissionRecord)
    assert len(subs) == 18 and len(records(path, GolfHoleStart)) == 18
    first, second, third = subs[:3]
    assert (first.origin, first.fallback_cause, first.source) == ("fallback", "timeout", None)
    assert first.errors[0].startswith("malformed:") and first.errors[1].startswith("timeout:")
    assert (second.origin, second.wrong_hole, second.attempts_used) == ("seat", 1, 1)
    assert (third.origin, third.source, third.fallback_cause) == ("seat", None, None)


def test_bad_requests_and_seats_are_refused_precisely(tmp_path: Path) -> None:
    async def scenario() -> None:
        async with golf_server(tmp_path) as server, httpx.AsyncClient(base_url=server.url) as http:
            cases = [
                ({"game": "golf", "course": "cobol"}, "course: unknown course 'cobol'"),
                ({"game": "golf"}, "course: required"),
                ({"game": "golf", "course": "python", "names": ["a", "b"]}, "names: a golf"),
                ({"game": "golf", "course": "python", "holes": 9}, "holes: a golf course"),
                ({"game": "golf", "course": "python", "seed": 3}, "seed: not used"),
                ({"game": "golf", "course": "python", "hole_deadline_seconds": 0},
                 "hole_deadline_seconds must be between"),
                ({"game": "chess"}, "game: unknown game 'chess'"),
                ({"course": "python"}, "course: only golf matches"),
                ({}, "hosts golf matches only"),
                ({"game": "golf", "course": "python", "colour": 1}, "colour"),
            ]
            for body, message in cases:
                r = await http.post("/matches", json=body)
                assert r.status_code == 400 and message in r.json()["error"], (body, r.text)
            _, url = create(server, hole_deadline_seconds=5)
            with pytest.raises(InvalidStatus) as e:
                await websockets.connect(url.replace("slot=0", "slot=1"))
            assert e.value.response.status_code == 403
            with pytest.raises(InvalidStatus) as e:
                await websockets.connect(url[:-4] + "XXXX")
            assert e.value.response.status_code == 403
            async with websockets.connect(url):
                with pytest.raises(InvalidStatus) as e:
                    await websockets.connect(url)
                assert e.value.response.status_code == 409

    asyncio.run(scenario())


def test_a_restarted_server_resumes_after_the_last_scored_hole(tmp_path: Path) -> None:
    async def scenario() -> dict[str, Any]:
        async with golf_server(tmp_path) as server:
            _, url = create(server, match_id="resume-me", hole_deadline_seconds=30)
            async with websockets.connect(url) as ws:
                assert await play_reference(ws, until_hole=3) is None  # hole 4 stays open
        async with golf_server(tmp_path, resume=True) as server:
            hosted = server.registry.get("resume-me")
            assert hosted is not None and hosted.status in ("waiting", "playing")
            port_url = url.split("/matches/")[1]
            async with websockets.connect(f"{server.ws_url}/matches/{port_url}") as ws:
                welcome = await recv(ws, "welcome")
                assert welcome["resumed"] is True
                nxt = await recv(ws, "observation")
                assert nxt["hole"] == 4 and nxt["observation"]["score"] > 0
                await answer(ws, nxt)
                done = await play_reference(ws)
            assert done is not None
            return done["result"]

    result = asyncio.run(scenario())
    assert result["document"]["totals"]["holes_passed"] == 18
    path = tmp_path / "replays" / "resume-me.ndjson"
    assert [s.hole for s in records(path, GolfHoleScore)] == list(range(1, 19))
    assert [s.hole for s in records(path, GolfHoleStart)] == list(range(1, 19))


def _cogolf(*args: str, timeout: float = 120) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", *args],
                          capture_output=True, text=True, timeout=timeout)


def test_golf_play_runs_the_policy_as_a_bot_process(tmp_path: Path) -> None:
    res, reps = tmp_path / "res", tmp_path / "reps"
    done = _cogolf("golf", "play", "--course", "python", "--bot", f"{POLICIES}:flaky",
                   "--model", "flaky", "--results", str(res), "--replays", str(reps),
                   "--match-id", "flaky-1", "--hole-deadline", "20")
    assert done.returncode == 0, done.stderr
    assert "No submission" in done.stdout and "score" in done.stdout
    doc = json.loads(next(res.glob("flaky.python.*.json")).read_text())
    by_hole = {h["hole"]: h for h in doc["holes"]}
    # Junk and a crash: the bot passes those holes at once (scored as no submission),
    # marked as its own fallbacks, and the result counts them.
    for key, cause in (("flatten", "policy_invalid"), ("levenshtein", "policy_raised")):
        assert by_hole[key]["reason"] == "No submission" and by_hole[key]["score"] == 1000
        assert by_hole[key]["fallback"] == cause
    assert doc["totals"]["fallbacks"] == 2
    assert by_hole["palindrome"]["status"] == "passed" and by_hole["palindrome"]["bytes"] == 21
    assert doc["totals"]["holes_passed"] == 16
    subs = {s.key: s for s in records(reps / "flaky-1.ndjson", GolfSubmissionRecord)}
    assert len(subs) == 18
    assert (subs["flatten"].origin, subs["flatten"].source, subs["flatten"].errors) == (
        "seat_fallback", None, [])
    assert subs["flatten"].fallback_detail == (
        "the policy's play would be refused: Object missing required field `source`")
    assert subs["levenshtein"].fallback_detail.startswith("RuntimeError: no idea (at policies.py:")
    assert subs["palindrome"].origin == "seat"
    board = _cogolf("golf", "leaderboard", str(res))
    assert board.returncode == 0 and "flaky" in board.stdout


def test_golf_play_in_process(tmp_path: Path) -> None:
    done = _cogolf("golf", "play", "--course", "python", "--bot", f"{POLICIES}:reference",
                   "--in-process", "--model", "ref", "--results", str(tmp_path / "res"),
                   "--replays", str(tmp_path / "reps"), "--match-id", "inproc")
    assert done.returncode == 0, done.stderr
    replay = read_golf_replay(tmp_path / "reps" / "inproc.ndjson")
    assert replay.result is not None and replay.result.document is not None
    assert replay.result.document.totals.holes_passed == 18


@pytest.mark.parametrize(("bot", "message"), [
    ("ws://127.0.0.1:9/some/path", "must be ws://HOST:PORT"),
    ("http://127.0.0.1:9", "must be ws://HOST:PORT"),
    ("ws://127.0.0.1:99999", "Port out of range"),
    ("literalist", "a Cogolf policy"),
    ("nope.py:play", "no file nope.py"),
])
def test_golf_play_refuses_bad_bot_values(
    bot: str, message: str, capsys: pytest.CaptureFixture[str]
) -> None:
    assert cli.main(["golf", "play", "--course", "python", "--bot", bot]) == 2
    assert message in capsys.readouterr().err


def test_golf_play_refuses_wait_in_process(capsys: pytest.CaptureFixture[str]) -> None:
    assert cli.main(["golf", "play", "--course", "python", "--bot", "wait", "--in-process"]) == 2
    assert "--in-process needs a policy" in capsys.readouterr().err


def test_golf_play_wait_hosts_for_an_external_bot(tmp_path: Path) -> None:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cogolf", "golf", "play", "--course", "python", "--bot", "wait",
         "--model", "outside", "--results", str(tmp_path / "res"),
         "--replays", str(tmp_path / "reps"), "--connect-timeout", "60"],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert line.startswith("seat URL:"), line
        url = line.split(maxsplit=2)[2].strip()
        bot = _cogolf("bot", "--url", url, "--policy", f"{POLICIES}:reference")
        assert bot.returncode == 0, bot.stderr
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    assert proc.returncode == 0, err
    assert "end: complete" in out
    doc = json.loads(next((tmp_path / "res").glob("outside.python.*.json")).read_text())
    assert doc["totals"]["holes_passed"] == 18


@pytest.mark.slow
def test_live_racket_course_with_a_bot_process(tmp_path: Path) -> None:
    need_racket()
    done = _cogolf("golf", "play", "--course", "racket", "--bot", f"{POLICIES}:reference",
                   "--model", "ref", "--results", str(tmp_path / "res"),
                   "--replays", str(tmp_path / "reps"), "--match-id", "rkt", timeout=300)
    assert done.returncode == 0, done.stderr
    doc = json.loads(next((tmp_path / "res").glob("ref.racket.*.json")).read_text())
    assert doc["totals"]["holes_passed"] == 18
    assert doc["totals"]["tests_passed"] == doc["totals"]["tests_total"]
    assert len(records(tmp_path / "reps" / "rkt.ndjson", GolfHoleScore)) == 18
