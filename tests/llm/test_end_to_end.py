"""LLM seats end to end: `cogolf serve` in its own process, `cogolf bot --llm` processes,
the real clients talking HTTP to the fake provider, and the whole output tree scanned
for the key afterwards."""

from __future__ import annotations

import json
import subprocess
import sys
from pathlib import Path
from typing import Any

import httpx
import pytest

from cogolf.bots.scripted import baseline_play
from cogolf.deck import load_public
from cogolf.llm.fake import Step
from tests.llm.helpers import DECK, KEY, all_text, write_config
from tests.serving import start_serve

ROOT = Path(__file__).resolve().parents[2]


def serve(data: Path, log: Path) -> tuple[subprocess.Popen, str]:
    return start_serve("--data", str(data), stderr=log.open("ab"))


def bot(config: Path, url: str, out: Path, slot: int) -> subprocess.Popen:
    argv = [
        sys.executable,
        "-m",
        "cogolf",
        "bot",
        "--llm",
        str(config),
        "--url",
        url,
        "--transcripts",
        str(out / "llm"),
    ]
    log = (out / f"bot{slot}.log").open("ab")
    return subprocess.Popen(argv, stdout=log, stderr=log, cwd=ROOT)


def records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


def assert_no_key(out: Path) -> None:
    files = all_text(out)
    assert len(files) >= 5
    leaks = [str(p) for p, data in files if KEY.encode() in data]
    assert not leaks, leaks


def test_a_cogolf_match_on_cogolf_serve_between_two_llm_seats(fake, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    configs = [
        write_config(tmp_path / "a.toml", fake, "openai", "seat0"),
        write_config(tmp_path / "b.toml", fake, "anthropic", "seat1"),
    ]
    # Seat 0: a 429 then a good reply on hole 1; the echo of the key in a 500 on hole 2.
    fake.script("seat0", Step(status=429, headers={"retry-after": "0.2"}))
    # Seat 1: hole 1's reply arrives after the deadline; hole 2 is prose then a fix.
    fake.script("seat1", Step("{}", delay=30), Step("I think the answer is {impl: nope}"))
    fake.script("seat0", Step(f"bad key {KEY}", status=500))
    server, url = serve(out / "data", out / "serve.log")
    try:
        made = httpx.post(
            f"{url}/matches",
            json={
                "seed": 5,
                "holes": 3,
                "hole_deadline_seconds": 4,
                "retry_deadline_seconds": 2,
                "names": ["gpt-ish", "claude-ish"],
            },
            timeout=30,
        ).json()
        bots = [bot(configs[s["slot"]], s["url"], out, s["slot"]) for s in made["seats"]]
        assert [b.wait(timeout=120) for b in bots] == [0, 0]
        status = httpx.get(f"{url}/matches/{made['match_id']}", timeout=30).json()
        assert status["status"] == "finished"
        replay = httpx.get(f"{url}/matches/{made['match_id']}/replay.ndjson", timeout=30).text
    finally:
        server.terminate()
        server.wait(timeout=30)
    lines = [json.loads(x) for x in replay.splitlines()]
    keys = lines[0]["holes"]
    subs = {(r["hole"], r["slot"]): r for r in lines if r["kind"] == "submission"}
    for hole, key in enumerate(keys, 1):
        pedant = DECK.specs[key].baselines["pedant"].impl
        literalist = DECK.specs[key].baselines["literalist"].impl
        assert subs[(hole, 0)]["impl"] == pedant  # the model's play, every hole
        assert subs[(hole, 0)]["source"] == "seat"
        # hole 1: the reply came too late, so the bot sent the literalist in time itself,
        # marked as its own fallback
        assert subs[(hole, 1)]["source"] == ("seat_fallback" if hole == 1 else "seat")
        assert subs[(hole, 1)]["impl"] == (literalist if hole == 1 else pedant)
        assert subs[(hole, 1)]["attempts"] == 1  # never the server's retry or fallback
    assert lines[-1]["kind"] == "result" and lines[-1]["reason"] == "complete"

    transcripts = sorted((out / "llm").iterdir())
    assert [p.name for p in transcripts] == [
        f"{made['match_id']}.seat0.ndjson",
        f"{made['match_id']}.seat1.ndjson",
    ]
    turns = [[r for r in records(p) if r["kind"] == "turn"] for p in transcripts]
    assert [t["outcome"] for t in turns[0]] == ["played"] * 3
    assert [t["outcome"] for t in turns[1]] == ["fallback", "played", "played"]
    assert turns[1][0]["seconds"] < 4
    attempts1 = [r for r in records(transcripts[1]) if r["kind"] == "attempt"]
    assert (
        attempts1[1]["reply"].startswith("I think")
        and "cannot be played" in (attempts1[2]["messages"][-1]["content"])
    )
    assert any(c.key == KEY for c in fake.calls)  # the key was really used...
    replay_file = next((out / "data").rglob(f"{made['match_id']}.ndjson"))
    verify = subprocess.run(
        [sys.executable, "-m", "cogolf", "replay", str(replay_file), "--verify"],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert verify.returncode == 0, verify.stdout + verify.stderr
    assert_no_key(out)  # ...and is in no file the run wrote


def test_a_golf_course_on_cogolf_serve_with_an_llm_seat(fake, tmp_path):
    out = tmp_path / "out"
    out.mkdir()
    config = write_config(tmp_path / "g.toml", fake, "openai", "golfer")
    fake.script(
        "golfer",
        Step("Shortest I know:\n```python\nf=lambda s:s[::-1]\n```\nEnjoy."),
        Step("```python\n" + "x" * 70000 + "\n```"),
    )
    server, url = serve(out / "data", out / "serve.log")
    try:
        made = httpx.post(
            f"{url}/matches",
            json={
                "game": "golf",
                "course": "python",
                "names": ["golf-llm"],
                "hole_deadline_seconds": 10,
                "retry_deadline_seconds": 3,
            },
            timeout=30,
        ).json()
        player = bot(config, made["seats"][0]["url"], out, 0)
        assert player.wait(timeout=300) == 0
        replay = httpx.get(f"{url}/matches/{made['match_id']}/replay.ndjson", timeout=30).text
    finally:
        server.terminate()
        server.wait(timeout=30)
    lines = [json.loads(x) for x in replay.splitlines()]
    subs = [r for r in lines if r["kind"] == "submission"]
    assert len(subs) == 18
    assert subs[0]["source"] == "f=lambda s:s[::-1]"  # the fence content, byte for byte
    assert subs[1]["source"] == "f=lambda*a:0"  # over the cap: asked again, then the stub
    scores = [r for r in lines if r["kind"] == "hole_score"]
    assert (scores[0]["result"]["status"], scores[0]["result"]["bytes"]) == ("passed", 18)
    assert scores[1]["result"]["status"] == "failed"
    transcript = next((out / "llm").iterdir())
    attempts = [r for r in records(transcript) if r["kind"] == "attempt"]
    assert "the cap is 65536" in attempts[2]["messages"][-1]["content"]
    assert_no_key(out)


def test_cogolf_play_takes_llm_seats_and_keeps_transcripts_beside_the_replay(fake, tmp_path):
    config = write_config(tmp_path / "a.toml", fake, "anthropic", "p0")
    replays = tmp_path / "replays"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "play",
            "--holes",
            "1",
            "--seat0",
            f"llm:{config}",
            "--seat1",
            "literalist",
            "--replays",
            str(replays),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    (replay,) = replays.glob("*.ndjson")
    assert (replays / "llm" / f"{replay.stem}.seat0.ndjson").is_file()
    assert fake.calls_for("p0")
    (tmp_path / "stdout.txt").write_text(r.stdout + r.stderr)
    assert_no_key(tmp_path)


@pytest.mark.slow
def test_bench_llm_prints_its_numbers():
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "bench",
            "llm",
            "--json",
            "--holes",
            "3",
            "--seats",
            "2",
            "--seat-holes",
            "1",
            "--latency",
            "0.05",
        ],
        capture_output=True,
        text=True,
        timeout=600,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    numbers = json.loads(r.stdout)
    assert numbers["overhead_ms_openai"]["holes"] == 3
    assert numbers["overhead_ms_anthropic"]["p50"] > -50  # a latency less the provider's
    c = numbers["concurrent"]
    assert (c["turns"], c["bot_fallbacks"], c["server_fallbacks"]) == (2, 0, 0)


def test_an_in_process_llm_seat_gives_up_within_the_deadline(fake, tmp_path):
    """In process the seat's deadline reaches the player too: a late reply is given up
    before the deadline and the seat plays the literalist's play in time, as a `cogolf
    bot` process would (no retry, no fallback of the server's)."""
    config = write_config(tmp_path / "a.toml", fake, "openai", "inproc")
    fake.script("inproc", Step("{}", delay=30))
    replays = tmp_path / "replays"
    r = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "play",
            "--in-process",
            "--holes",
            "1",
            "--hole-deadline",
            "2",
            "--seat0",
            f"llm:{config}",
            "--replays",
            str(replays),
        ],
        capture_output=True,
        text=True,
        timeout=300,
        cwd=ROOT,
    )
    assert r.returncode == 0, r.stderr
    (replay,) = replays.glob("*.ndjson")
    (sub,) = [x for x in records(replay) if x["kind"] == "submission" and x["slot"] == 0]
    assert (sub["source"], sub["attempts"], sub["errors"]) == ("seat_fallback", 1, [])
    assert sub["fallback_cause"] == "llm_no_reply"
    assert "fallbacks 1 (llm_no_reply 1)" in r.stdout
    (start,) = [x for x in records(replay) if x["kind"] == "hole_start"]
    literalist = baseline_play(load_public(), start["spec_key"], "literalist")
    assert sub["impl"] == literalist["impl"]
