"""An LLM seat whose provider cannot be reached: said at once, never retried all hole.

Against a port nobody listens on, a turn gives up after `CONNECT_RETRIES` more
tries (well inside the deadline), and after `BROKEN_AFTER` holes in a row without
a usable reply the seat is broken: each later hole is its marked fallback at once,
without a request. `cogolf play` prints the first failure with the transcript's
path while the match runs, and the seat's tokens and cost after the scorecard.
"""

from __future__ import annotations

import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cogolf.llm.config import from_table
from cogolf.llm.fake import Step
from cogolf.llm.player import BROKEN_AFTER, CONNECT_RETRIES, GiveUp, LLMPlayer, SeatBroken
from tests.llm.helpers import config, observation

ROOT = Path(__file__).resolve().parents[2]
GOOD = {"impl": "def solve(grid):\n    return grid\n", "tests": [], "note": ""}


def closed_port() -> int:
    """A loopback port with nobody listening (bound, then released)."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def unreachable(provider: str = "openai") -> LLMPlayer:
    url = f"http://127.0.0.1:{closed_port()}" + ("/v1" if provider == "openai" else "")
    return LLMPlayer(from_table({"provider": provider, "model": "m", "base_url": url}))


@pytest.mark.parametrize("provider", ["openai", "anthropic"])
def test_a_refused_connection_gives_up_in_a_few_tries_then_breaks_the_seat(provider):
    p = unreachable(provider)
    start = time.monotonic()
    for hole in range(1, BROKEN_AFTER):
        with pytest.raises(GiveUp) as gave:
            p(observation(hole=hole), budget=60)
        assert not isinstance(gave.value, SeatBroken)
        assert gave.value.fallback_cause == "llm_no_reply"
        assert re.search(
            rf"cannot be reached at http://127\.0\.0\.1:\d+\S* \({CONNECT_RETRIES + 1} tries\)",
            str(gave.value),
        ), gave.value
    with pytest.raises(SeatBroken) as broke:
        p(observation(hole=BROKEN_AFTER), budget=60)
    assert broke.value.fallback_cause == "llm_broken"
    assert f"no usable reply on {BROKEN_AFTER} holes in a row" in str(broke.value)
    # A 60 s deadline per hole, yet the failing holes cost about a second in all.
    assert time.monotonic() - start < 10
    # Broken: the next hole gives up at once, without a request.
    later = time.monotonic()
    with pytest.raises(SeatBroken):
        p(observation(hole=BROKEN_AFTER + 1), budget=60)
    assert time.monotonic() - later < 0.1


def test_a_played_hole_resets_the_count(fake):
    # two holes refused, one played, two refused: never broken (not in a row)
    refuse = Step('{"error": {"message": "no"}}', status=400)
    fake.script("m", refuse, refuse, Step(json.dumps(GOOD)), refuse, refuse)
    p = LLMPlayer(config(fake, "openai", "m"))
    outcomes = []
    for hole in range(1, 6):
        try:
            p(observation(hole=hole), budget=10)
            outcomes.append("played")
        except SeatBroken:
            outcomes.append("broken")
        except GiveUp:
            outcomes.append("gave up")
    assert outcomes == ["gave up", "gave up", "played", "gave up", "gave up"]
    assert BROKEN_AFTER == 3  # the README states it


@pytest.mark.slow
def test_cogolf_play_says_so_on_the_first_hole_and_prints_the_seats_usage(tmp_path):
    model = tmp_path / "closed.toml"
    model.write_text(
        f'provider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:{closed_port()}/v1"\n'
    )
    replays = tmp_path / "replays"
    start = time.monotonic()
    run = subprocess.run(
        [sys.executable, "-m", "cogolf", "play", "--seat0", f"llm:{model}", "--seat1",
         "literalist", "--holes", "5", "--replays", str(replays)],
        capture_output=True, text=True, timeout=300, cwd=ROOT,
    )  # fmt: skip
    seconds = time.monotonic() - start
    assert run.returncode == 0, run.stderr
    assert seconds < 60, seconds  # five 40 s holes; a dead provider costs none of them
    (replay,) = replays.glob("*.ndjson")
    transcript = replays / "llm" / f"{replay.stem}.seat0.ndjson"
    first, broken = run.stderr.strip().splitlines()
    assert first.startswith("cogolf play: llm:closed, hole 1: its bot sent its own fallback "
                            "(llm_no_reply): the provider cannot be reached at")  # fmt: skip
    assert first.endswith(f"; transcript: {transcript}")
    assert "hole 3: its bot sent its own fallback (llm_broken)" in broken
    subs = [json.loads(x) for x in replay.read_text().splitlines()]
    causes = [r["fallback_cause"] for r in subs if r["kind"] == "submission" and r["slot"] == 0]
    assert causes == ["llm_no_reply", "llm_no_reply", "llm_broken", "llm_broken", "llm_broken"]
    out = run.stdout
    assert "fallbacks 5 (llm_broken 3, llm_no_reply 2)" in out
    assert "WARNING: Ash (llm:closed) played no hole of its own" in out
    assert re.search(r"LLM usage .*\n.*seat\s+entrant\s+turns\s+fallbacks\s+tokens in", out)
    assert re.search(r"^\s+0\s+llm:closed\s+5\s+5\s+0\s+0\s+-$", out, re.M), out
    explained = subprocess.run(
        [sys.executable, "-m", "cogolf", "replay", str(replay), "--explain"],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert "WARNING: Ash (llm:closed) played no hole of its own" in explained.stdout
    page = tmp_path / "page.html"
    made = subprocess.run(
        [sys.executable, "-m", "cogolf", "replay", str(replay), "--html", str(page)],
        capture_output=True, text=True, timeout=120, cwd=ROOT,
    )  # fmt: skip
    assert made.returncode == 0, made.stderr
    endcard = page.read_text().split('class="endcard"', 1)[1].split("</div>", 1)[0]
    assert "NO PLAY OF ITS OWN</span> Ash (llm:closed): every hole was a fallback" in endcard
