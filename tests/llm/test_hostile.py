"""The LLM player attacked: a hostile provider on loopback (raw sockets), the real clients.

Every attack asserts the outcome: the player plays or gives up (so the runtime sends
the fallback) inside its budget, the key reaches no error, log line or transcript,
and a reply cannot forge transcript lines or terminal escapes.
"""

from __future__ import annotations

import json
import time
from typing import Any

import httpx
import pytest
from structlog.testing import capture_logs

from cogolf.llm.config import from_table
from cogolf.llm.player import GiveUp, LLMPlayer
from tests.llm import hostile
from tests.llm.helpers import DECK, KEY, KEY_ENV, PROVIDERS, observation
from tests.llm.test_end_to_end import assert_no_key, bot, records, serve

GOOD = {
    "impl": "def solve(grid):\n    return grid\n",
    "note": "mine",
    "tests": [{"name": "one", "args": [[[0]]], "expect": [[0]], "why": "trivial"}],
}


def hostile_player(h: hostile.HostileProvider, provider: str = "openai", **more: Any) -> LLMPlayer:
    url = h.url + "/v1" if provider == "openai" else h.url
    table = {
        "provider": provider,
        "model": "m",
        "base_url": url,
        "api_key_env": KEY_ENV,
        "request_timeout": 30.0,
        **more,
    }
    return LLMPlayer(from_table(table))


def anthropic_body(text: str) -> dict[str, Any]:
    return {
        "id": "m",
        "type": "message",
        "role": "assistant",
        "model": "m",
        "content": [{"type": "text", "text": text}],
        "stop_reason": "end_turn",
        "usage": {"input_tokens": 1, "output_tokens": 1},
    }


def good(provider: str) -> hostile.Behaviour:
    text = json.dumps(GOOD)
    return hostile.respond(
        hostile.openai_body(text) if provider == "openai" else anthropic_body(text)
    )


def give_up_within(p: LLMPlayer, budget: float) -> GiveUp:
    """The player gives up (never another exception) before its budget runs out."""
    start = time.monotonic()
    with capture_logs() as logs, pytest.raises(GiveUp) as info:
        p(observation(), budget=budget)
    assert time.monotonic() - start < budget, time.monotonic() - start
    text = str(info.value) + json.dumps(logs, default=str)
    assert KEY not in text
    return info.value


@pytest.fixture
def key(monkeypatch: pytest.MonkeyPatch) -> str:
    monkeypatch.setenv(KEY_ENV, KEY)
    return KEY


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_redirect_to_another_origin_is_not_followed(key, provider):
    with hostile.HostileProvider() as outside, hostile.HostileProvider() as h:
        path = "/v1/chat/completions" if provider == "openai" else "/v1/messages"
        outside.default = good(provider)
        h.default = hostile.respond(b"", 307, {"location": outside.url + path})
        why = give_up_within(hostile_player(h, provider), 5)
        assert "307" in str(why)
        assert KEY.encode() in h.requests[0].head  # the provider itself got it...
        assert outside.requests == []  # ...and nobody else


@pytest.mark.parametrize("provider", PROVIDERS)
@pytest.mark.parametrize(
    "attack",
    [
        hostile.trickle(0.1),
        hostile.endless(),
        hostile.hang_after_headers,
        hostile.silence,
        hostile.reset,
    ],
    ids=["trickle", "endless-body", "hang-after-headers", "silence", "reset"],
)
def test_a_provider_that_never_answers_properly_costs_the_turn_not_the_deadline(
    key, provider, attack
):
    with hostile.HostileProvider(attack) as h:
        give_up_within(hostile_player(h, provider), 3)
        assert h.requests  # it was really asked


def test_a_trickled_reply_is_cut_at_the_request_timeout_not_per_read(key):
    with hostile.HostileProvider(hostile.trickle(0.05)) as h:
        p = hostile_player(h, request_timeout=1.0)
        start = time.monotonic()
        give_up_within(p, 4)
        # Each request ended at its timeout, so several fitted in the budget.
        assert len(h.requests) >= 2, (len(h.requests), time.monotonic() - start)


def test_the_key_echoed_where_a_number_belongs_is_counted_zero_not_raised(key, tmp_path):
    """A count that is not a count (here the key) used to escape as a ValueError quoting
    it, which the runtime logged; it now counts 0 and the play stands."""
    echo = hostile.openai_body(json.dumps(GOOD), prompt_tokens=KEY, completion_tokens=-3, cost=KEY)
    with hostile.HostileProvider(hostile.respond(echo)) as h:
        p = hostile_player(h)
        p.open_transcript(tmp_path, "m-1", 0)
        with capture_logs() as logs:
            assert p(observation(), budget=5) == GOOD
    assert KEY not in json.dumps(logs, default=str)
    data = (tmp_path / "m-1.seat0.ndjson").read_text()
    assert KEY not in data
    turn = json.loads(data.splitlines()[-1])
    assert (turn["input_tokens"], turn["output_tokens"], turn["cost"]) == (0, 0, None)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_an_error_body_with_the_key_escapes_and_a_novel_is_cut_and_redacted(key, provider):
    evil = f'bad key {KEY}\n{{"event": "forged"}}\x1b[2J\x1b]0;owned\x07' + "x" * 100_000
    body = {"error": {"message": evil, "type": "x"}}
    with hostile.HostileProvider(hostile.respond(body, 400)) as h:
        why = str(give_up_within(hostile_player(h, provider), 3))
    assert "400" in why and len(why) < 1000
    assert "\x1b" not in why and "\n" not in why and "\x07" not in why


@pytest.mark.parametrize(
    "body",
    [
        b"[" * 200_000,
        b'{"choices": [{"message": {"content": "\xff\xfe\xc0"}, "finish_reason": "stop"}]}',
        b"\xff" * 1000,
        b'{"choices": 7}',
        b"null",
    ],
    ids=["json-bomb", "invalid-utf8-content", "invalid-utf8-body", "wrong-shape", "null"],
)
def test_garbage_bodies_are_retried_then_given_up_never_raised(key, body):
    with hostile.HostileProvider(hostile.respond(body)) as h:
        give_up_within(hostile_player(h), 3)
        assert len(h.requests) >= 2  # a bad body is the provider's error: retried


def test_retry_after_too_long_gives_up_at_once_and_negative_retries_at_once(key):
    with hostile.HostileProvider() as h:
        h.script(hostile.respond({"error": {"message": "slow"}}, 429, {"retry-after": "999999"}))
        start = time.monotonic()
        why = give_up_within(hostile_player(h), 5)
        assert "would miss the deadline" in str(why) and time.monotonic() - start < 1
        h.script(
            hostile.respond({"error": {"message": "x"}}, 429, {"retry-after": "-5"}),
            hostile.respond({"error": {"message": "x"}}, 429, {"retry-after-ms": "nan"}),
            good("openai"),
        )
        assert hostile_player(h)(observation(), budget=5) == GOOD


def test_a_reply_cannot_forge_transcript_lines_or_terminal_escapes(key, tmp_path):
    forged = '\n{"kind": "turn", "outcome": "played"}\n\x1b[31m\u2028' + KEY
    with hostile.HostileProvider() as h:
        h.default = hostile.respond(hostile.openai_body(forged))
        p = hostile_player(h)
        p.open_transcript(tmp_path, "m-1", 0)
        give_up_within(p, 3)
    data = (tmp_path / "m-1.seat0.ndjson").read_bytes()
    assert KEY.encode() not in data and b"\x1b" not in data
    lines = data.decode().split("\n")[:-1]
    kinds = [json.loads(line)["kind"] for line in lines]
    assert kinds[0] == "start" and kinds[-1] == "turn" and kinds.count("turn") == 1
    assert set(kinds[1:-1]) == {"attempt"}


def test_a_plain_http_base_url_off_loopback_is_warned_about(key):
    with capture_logs() as logs:
        LLMPlayer(
            from_table(
                {
                    "provider": "openai",
                    "model": "m",
                    "api_key_env": KEY_ENV,
                    "base_url": "http://llm.example.org/v1",
                }
            )
        ).warm()
        LLMPlayer(
            from_table(
                {
                    "provider": "openai",
                    "model": "m",
                    "api_key_env": KEY_ENV,
                    "base_url": "http://127.0.0.1:9/v1",
                }
            )
        ).warm()
    warned = [e for e in logs if e["event"] == "llm_plain_http"]
    assert len(warned) == 1 and warned[0]["host"] == "llm.example.org"


def test_seats_on_cogolf_serve_send_the_literalist_in_time_whatever_the_provider_does(
    key, tmp_path
):
    """Real `cogolf serve`, real `cogolf bot --llm` processes, each provider hostile on every
    request: every hole is the seat's own submission, on the first attempt (never the
    server's retry or fallback), the literalist's, and marked as the seat's own fallback
    (no usable reply), as the README promises."""
    out = tmp_path / "out"
    out.mkdir()
    bomb = hostile.respond(b"[" * 200_000)
    # The key echoed in a 500's body and headers, with escapes for the operator's terminal.
    echo = hostile.respond(
        {"error": {"message": f"{KEY}\x1b[2J\nforged"}}, 500, {"x-echo": KEY, "retry-after": "0"}
    )
    with (
        hostile.HostileProvider(
            hostile.cycle(hostile.trickle(0.1), hostile.reset, echo, hostile.silence)
        ) as h0,
        hostile.HostileProvider(
            hostile.cycle(hostile.hang_after_headers, hostile.endless(), bomb)
        ) as h1,
    ):
        configs = []
        for slot, (h, provider) in enumerate(((h0, "openai"), (h1, "anthropic"))):
            url = h.url + "/v1" if provider == "openai" else h.url
            configs.append(tmp_path / f"{slot}.toml")
            configs[-1].write_text(
                f'provider = "{provider}"\nmodel = "m"\nbase_url = "{url}"\n'
                f'api_key_env = "{KEY_ENV}"\nrequest_timeout = 30\n'
            )
        server, url = serve(out / "data", out / "serve.log")
        try:
            made = httpx.post(
                f"{url}/matches",
                json={
                    "seed": 9,
                    "holes": 3,
                    "hole_deadline_seconds": 3,
                    "retry_deadline_seconds": 2,
                    "names": ["a", "b"],
                },
                timeout=30,
            ).json()
            bots = [bot(configs[s["slot"]], s["url"], out, s["slot"]) for s in made["seats"]]
            assert [b.wait(timeout=120) for b in bots] == [0, 0]
            replay = httpx.get(f"{url}/matches/{made['match_id']}/replay.ndjson", timeout=30).text
        finally:
            server.terminate()
            server.wait(timeout=30)
        assert h0.requests and h1.requests
    lines = [json.loads(x) for x in replay.splitlines()]
    assert lines[-1]["kind"] == "result" and lines[-1]["reason"] == "complete"
    subs = [r for r in lines if r["kind"] == "submission"]
    assert len(subs) == 6
    for sub in subs:
        key_of_hole = lines[0]["holes"][sub["hole"] - 1]
        literalist = DECK.specs[key_of_hole].baselines["literalist"].impl
        assert (sub["source"], sub["attempts"], sub["impl"]) == (
            "seat_fallback", 1, literalist
        ), sub
        # no usable reply on holes 1 and 2; the third in a row breaks the seat (on a loaded
        # machine the bot's own deadline may come first: still its marked fallback, in time)
        cause = "llm_broken" if sub["hole"] == 3 else "llm_no_reply"
        assert sub["fallback_cause"] in (cause, "policy_timeout") and sub["fallback_detail"], sub
    assert lines[-1]["fallbacks"] == [3, 3]
    for transcript in (out / "llm").iterdir():
        turns = [r for r in records(transcript) if r["kind"] == "turn"]
        assert [t["outcome"] for t in turns] == ["fallback"] * 3
        assert all(t["seconds"] < 3 for t in turns)
    assert_no_key(out)
    logs = b"".join(p.read_bytes() for p in out.glob("bot*.log"))
    assert b"llm_attempt" in logs and b"\x1b" not in logs
    assert b"[redacted]" in logs  # the echo was met, and cut out


def test_a_retry_after_that_is_no_date_falls_back_on_the_players_backoff(key):
    with hostile.HostileProvider() as h:
        h.script(
            hostile.respond({"error": {"message": "x"}}, 429, {"retry-after": f"Mon, {KEY}"}),
            hostile.respond({"error": {"message": "x"}}, 503, {"retry-after": "Mon, 99 Foo 1"}),
            good("openai"),
        )
        with capture_logs() as logs:
            assert hostile_player(h)(observation(), budget=5) == GOOD
        assert len(h.requests) == 3 and KEY not in json.dumps(logs, default=str)


@pytest.mark.parametrize("provider", PROVIDERS)
def test_a_key_with_a_line_break_injects_no_header_and_is_not_quoted(monkeypatch, provider):
    """A careless `export KEY=...` with a CR LF: the client refuses to send it, and the
    refusal (which the HTTP layer words with the header's value) is not repeated."""
    bad = KEY + "\r\nX-Injected: 1"
    monkeypatch.setenv(KEY_ENV, bad)
    with hostile.HostileProvider(good(provider)) as h:
        p = hostile_player(h, provider)
        start = time.monotonic()
        with capture_logs() as logs, pytest.raises(GiveUp) as info:
            p(observation(), budget=3)
        assert time.monotonic() - start < 3
    assert not any(b"X-Injected" in r.head for r in h.requests)
    text = str(info.value) + json.dumps(logs, default=str)
    assert KEY not in text and "X-Injected" not in text
