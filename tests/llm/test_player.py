"""The LLM player against the fake provider, through the real openai and anthropic clients.

Each test scripts the provider's replies and asserts what the player returns or
that it gives up (so the bot runtime plays the fallback) before its deadline.
"""

from __future__ import annotations

import json
import time
from pathlib import Path

import pytest

from cogolf.engine.intake import Accepted, accept
from cogolf.llm.fake import FakeProvider, Step
from cogolf.llm.player import GiveUp, LLMPlayer
from cogolf.llm.redact import Redactor
from cogolf.llm.transcript import Transcript, transcript_path
from tests.llm.helpers import DECK, KEY, PROVIDERS, config, observation

GOOD = {
    "impl": "def solve(grid):\n    return grid\n",
    "note": "mine",
    "tests": [{"name": "one", "args": [[[0]]], "expect": [[0]], "why": "trivial"}],
}


def player(fake: FakeProvider, provider: str, model: str, tmp: Path | None = None) -> LLMPlayer:
    p = LLMPlayer(config(fake, provider, model))
    if tmp is not None:
        p.open_transcript(tmp, "m-1", 0)
    return p


def requests_of(fake: FakeProvider, model: str) -> list[str]:
    """The last user message of each request the model received."""
    return [c.body["messages"][-1]["content"] for c in fake.calls_for(model)]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_plain_json_and_prose_with_a_fence_are_both_played(fake, provider):
    fake.script(
        "m",
        Step(json.dumps(GOOD)),
        Step("Sure! Here is my play.\n```json\n" + json.dumps(GOOD) + "\n```\nGood luck."),
    )
    p = player(fake, provider, "m")
    assert p(observation(), budget=10) == GOOD
    assert p(observation(), budget=10) == GOOD
    call = fake.calls_for("m")[0]
    assert call.key == KEY  # the real client sent the key from the environment
    prompt = call.prompt() + json.dumps(call.body.get("system", ""))
    spec = DECK.specs[sorted(DECK.specs)[0]].spec
    assert spec.prompt in prompt and "Ash" in prompt and "Basil" in prompt


@pytest.mark.parametrize("provider", PROVIDERS)
def test_invalid_json_is_asked_again_once_with_the_exact_error(fake, provider):
    fake.script(
        "m", Step('{"impl": "def solve(grid):\n return 1", "tests": [}'), Step(json.dumps(GOOD))
    )
    assert player(fake, provider, "m")(observation(), budget=10) == GOOD
    reask = requests_of(fake, "m")[1]
    assert "cannot be played" in reask and "no JSON object with an impl key" in reask
    assert fake.calls_for("m")[1].body["messages"][-2]["role"] == "assistant"


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_reply_over_the_caps_is_refused_with_the_servers_message(fake, provider):
    big = dict(GOOD, impl="def solve(grid):\n    return grid\n" + "#" * 5000)
    fake.script("m", Step(json.dumps(big)), Step(json.dumps(big)))
    with pytest.raises(GiveUp, match="the cap is 4000"):
        player(fake, provider, "m")(observation(), budget=10)
    # The re-ask quotes the intake's own message, path included.
    assert "the cap is 4000 - at `$.impl`" in requests_of(fake, "m")[1]
    assert len(fake.calls_for("m")) == 2  # one re-ask, no more


def test_wrong_types_get_the_path_precise_message(fake):
    bad = dict(GOOD, tests=[{"name": 3, "args": [1], "expect": 1}])
    fake.script("m", Step(json.dumps(bad)), Step(json.dumps(GOOD)))
    assert player(fake, "openai", "m")(observation(), budget=10) == GOOD
    assert "Expected `str`, got `int` - at `$.tests[0].name`" in requests_of(fake, "m")[1]


def test_every_accepted_play_is_accepted_by_the_server_intake(fake):
    six = dict(GOOD, tests=GOOD["tests"] * 6)  # extra tests are dropped by the server, not refused
    fake.script("m", Step(json.dumps(six)))
    play = player(fake, "openai", "m")(observation(), budget=10)
    verdict = accept(json.dumps({"type": "submission", "hole": 1, **play}), 1)
    assert isinstance(verdict, Accepted) and verdict.dropped_tests == 1


@pytest.mark.parametrize("provider", PROVIDERS)
def test_429_waits_for_retry_after_then_plays(fake, provider, tmp_path):
    fake.script("m", Step(status=429, headers={"retry-after": "0.4"}), Step(json.dumps(GOOD)))
    p = player(fake, provider, "m", tmp_path)
    start = time.monotonic()
    assert p(observation(), budget=10) == GOOD
    assert time.monotonic() - start >= 0.4
    lines = [json.loads(x) for x in transcript_path(tmp_path, "m-1", 0).read_text().splitlines()]
    attempts = [x for x in lines if x["kind"] == "attempt"]
    assert attempts[0]["error"]["kind"] == "rate_limited"
    assert attempts[0]["error"]["retry_after"] == 0.4
    assert attempts[1]["error"] is None and attempts[1]["output_tokens"] > 0


def test_a_retry_after_beyond_the_deadline_gives_up_at_once(fake):
    fake.script("m", Step(status=429, headers={"retry-after": "30"}))
    start = time.monotonic()
    with pytest.raises(GiveUp, match=r"rate_limited: waiting 30\.00 s"):
        player(fake, "openai", "m")(observation(), budget=5)
    assert time.monotonic() - start < 1.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_5xx_are_retried_with_backoff(fake, provider):
    fake.script("m", Step(status=500), Step(status=503), Step(json.dumps(GOOD)))
    assert player(fake, provider, "m")(observation(), budget=10) == GOOD
    assert len(fake.calls_for("m")) == 3


def test_5xx_forever_gives_up_before_the_deadline(fake):
    fake.script("m", *[Step(status=500)] * 200)
    start = time.monotonic()
    with pytest.raises(GiveUp):
        player(fake, "openai", "m")(observation(), budget=2.0)
    assert time.monotonic() - start < 2.0


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_reply_after_the_deadline_is_abandoned_in_time(fake, provider):
    fake.script("m", Step(json.dumps(GOOD), delay=8))
    p = player(fake, provider, "m")
    p.warm()
    start = time.monotonic()
    with pytest.raises(GiveUp):
        p(observation(), budget=1.5)
    assert time.monotonic() - start < 1.5


@pytest.mark.parametrize(
    ("provider", "finish"), [("openai", "length"), ("anthropic", "max_tokens")]
)
def test_truncated_replies_are_retried(fake, provider, finish):
    fake.script("m", Step('{"impl": "def so', finish=finish), Step(json.dumps(GOOD)))
    assert player(fake, provider, "m")(observation(), budget=10) == GOOD


@pytest.mark.parametrize(
    ("provider", "step"),
    [
        ("openai", Step(refusal="I cannot help with that")),
        ("anthropic", Step("no", finish="refusal")),
    ],
)
def test_refusals_are_retried(fake, provider, step):
    fake.script("m", step, Step(json.dumps(GOOD)))
    assert player(fake, provider, "m")(observation(), budget=10) == GOOD


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_rejected_request_is_not_retried(fake, provider):
    fake.script("m", Step("bad model", status=404), Step(json.dumps(GOOD)))
    with pytest.raises(GiveUp, match="provider refused the request: HTTP 404"):
        player(fake, provider, "m")(observation(), budget=10)
    assert len(fake.calls_for("m")) == 1


def test_golf_source_is_the_fence_content_checked_against_the_cap(fake):
    obs = {
        "game": "golf",
        "hole": 3,
        "holes": 18,
        "course": "python",
        "task": {
            "title": "t",
            "description": "reverse s",
            "signature": "def f(s: str) -> str",
            "public_tests": [{"args": ["ab"], "expect": "ba"}],
            "file_name": "x.py",
        },
        "rules": {"language": "Python 3", "max_source_bytes": 40},
    }
    fake.script(
        "m",
        Step("Here:\n```python\nf=lambda s:s[::-1]\n```\n"),
        Step("```python\n" + "#" * 50 + "\n```"),
        Step("```python\nf=lambda s:s[::-1]\n```"),
    )
    p = player(fake, "anthropic", "m")
    assert p(obs, budget=10) == "f=lambda s:s[::-1]"
    assert p(obs, budget=10) == "f=lambda s:s[::-1]"
    assert "source is 50 bytes; the cap is 40" in requests_of(fake, "m")[-1]
    assert "def f(s: str) -> str" in requests_of(fake, "m")[0]


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_key_echoed_by_the_provider_reaches_no_play_log_or_transcript(
    fake, provider, tmp_path, capsys
):
    from cogolf.logs import configure

    configure("info", json=True)
    echo = dict(GOOD, note=f"your key is {KEY}")
    fake.script("m", Step(f"invalid key {KEY}", status=500), Step(json.dumps(echo)))
    play = player(fake, provider, "m", tmp_path)(observation(), budget=10)
    assert KEY not in json.dumps(play) and "[redacted]" in play["note"]
    written = transcript_path(tmp_path, "m-1", 0).read_text()
    assert "[redacted]" in written and KEY not in written
    captured = capsys.readouterr()
    assert "llm_attempt" in captured.err and KEY not in captured.err + captured.out


def test_transcript_is_owner_only_and_holds_tokens_and_latency(fake, tmp_path):
    fake.script("m", Step(json.dumps(GOOD), cost=0.0125))
    p = player(fake, "openai", "m", tmp_path)
    p(observation(), budget=10)
    path = transcript_path(tmp_path, "m-1", 0)
    assert path.stat().st_mode & 0o777 == 0o600
    kinds = [json.loads(x) for x in path.read_text().splitlines()]
    start, attempt, turn = kinds
    assert (start["kind"], start["model"], start["slot"]) == ("start", "m", 0)
    assert attempt["cost"] == 0.0125 and attempt["latency_ms"] >= 0
    assert attempt["messages"][0]["role"] == "user" and attempt["reply"] == json.dumps(GOOD)
    assert (turn["outcome"], turn["input_tokens"] > 0, turn["cost"]) == ("played", True, 0.0125)


def test_prices_give_a_cost_when_the_provider_reports_none(fake, tmp_path):
    cfg = config(fake, "anthropic", "m", input_price_per_mtok=3.0, output_price_per_mtok=15.0)
    p = LLMPlayer(cfg, transcript=Transcript(tmp_path / "t.ndjson", Redactor(None)))
    p(observation(), budget=10)
    turn = json.loads((tmp_path / "t.ndjson").read_text().splitlines()[-1])
    expected = (turn["input_tokens"] * 3.0 + turn["output_tokens"] * 15.0) / 1e6
    assert turn["cost"] == pytest.approx(expected) and turn["cost"] > 0


def test_a_hostile_match_id_cannot_steer_the_transcript(fake, tmp_path):
    p = player(fake, "openai", "m")
    p.open_transcript(tmp_path / "llm", "../../escape", 1)
    assert [x.name for x in (tmp_path / "llm").iterdir()] == ["match.seat1.ndjson"]


@pytest.mark.parametrize(
    "text",
    [
        '{"impl": [' * 20_000,  # deep and unclosed: every start would parse to the end
        "[" * 100_000 + "]" * 100_000,  # deeper than the parser's recursion
        "{" + "x" * 500_000,  # far beyond any play
    ],
)
def test_hostile_replies_are_refused_quickly(fake, text):
    fake.script("m", Step(text), Step(text))
    start = time.monotonic()
    with pytest.raises(GiveUp, match="the reply"):
        player(fake, "openai", "m")(observation(), budget=20)
    assert time.monotonic() - start < 5


def test_the_prompt_carries_the_rules_and_the_legality_verdicts(fake):
    history = [
        {
            "hole": 1,
            "spec_key": "adjacent_mines",
            "hole_score": -2,
            "your_par_fails": 1,
            "their_par_fails": 0,
            "their_note": "edges count",
            "your_tests": [
                {
                    "name": "wraps",
                    "args": [[[1, 0]]],
                    "expect": [[0, 2]],
                    "legal": False,
                    "legal_reason": "ref_mismatch",
                    "outcome": "not_fired",
                },
                {
                    "name": "plain",
                    "args": [[[0]]],
                    "expect": [[0]],
                    "legal": True,
                    "legal_reason": "",
                    "outcome": "held",
                },
            ],
            "their_tests": [
                {
                    "name": "corner",
                    "args": [[[1]]],
                    "expect": [[0]],
                    "why": "no self",
                    "outcome": "breach",
                    "your_result": "[[1]]",
                }
            ],
        }
    ]
    obs = observation(sorted(DECK.specs)[1], hole=2, history=history)
    obs["rules"] = {"max_tests": 5, "max_impl_chars": 4000, "cpu_seconds_per_call": 1.0}
    fake.script("m", Step(json.dumps(GOOD)))
    player(fake, "anthropic", "m")(obs, budget=10)
    call = fake.calls_for("m")[0]
    system, prompt = call.body["system"], call.prompt()
    assert '"cpu_seconds_per_call": 1.0' in system and "at most 4000 characters" in system
    wraps = next(line for line in prompt.splitlines() if "'wraps'" in line)
    assert "ILLEGAL" in wraps and "NOT the real one" in wraps and "[[0,2]]" in wraps
    assert "'plain'" in prompt and ": legal;" in prompt
    assert "their test 'corner'" in prompt and "your code returned [[1]]" in prompt
    assert "their note: edges count" in prompt and "Hole 2 of 9" in prompt
