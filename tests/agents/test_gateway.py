"""The model gateway through the real openai and anthropic clients: tokens, budgets
checked before forwarding (last call admitted, first refused), streaming, parallel
calls, what is refused, transcripts, and hostile providers."""

from __future__ import annotations

import json
import os
import stat
import threading
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import anthropic
import httpx
import openai
import pytest

from cogolf.agents.gateway import Gateway
from cogolf.agents.meter import Budget, Meter, Prices
from cogolf.llm.config import from_table
from cogolf.llm.fake import FakeProvider, Step, ToolCall
from tests.llm import hostile
from tests.llm.helpers import KEY, KEY_ENV, config

MSG = [{"role": "user", "content": "go"}]


@pytest.fixture(scope="module")
def fake() -> Iterator[FakeProvider]:
    with FakeProvider() as provider:
        yield provider


@pytest.fixture(scope="module")
def gateway() -> Iterator[Gateway]:
    with Gateway() as gw:
        yield gw


@pytest.fixture(autouse=True)
def key(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv(KEY_ENV, KEY)


def oai(gw: Gateway, token: str) -> openai.OpenAI:
    return openai.OpenAI(base_url=gw.openai_url, api_key=token, max_retries=0)


def ant(gw: Gateway, token: str) -> anthropic.Anthropic:
    return anthropic.Anthropic(base_url=gw.anthropic_url, api_key=token, max_retries=0)


def test_tool_calls_both_apis_forwarded_with_the_real_key_and_the_entrants_model(
        fake: FakeProvider, gateway: Gateway, tmp_path: Path) -> None:
    meter = Meter(Budget())
    token = gateway.grant(config(fake, "openai", "gw-tools"), meter, tmp_path / "t.ndjson")
    fake.script("gw-tools", Step(tool_calls=(ToolCall("write_file", {"path": "a.py"}),)))
    reply = oai(gateway, token).chat.completions.create(
        model="a-pricier-model", messages=MSG,
        tools=[{"type": "function", "function": {"name": "write_file", "parameters": {}}}])
    call = reply.choices[0].message.tool_calls[0]
    assert (call.function.name, json.loads(call.function.arguments)) == ("write_file",
                                                                         {"path": "a.py"})
    sent = fake.calls_for("gw-tools")[-1]
    assert sent.key == KEY and sent.body["model"] == "gw-tools"  # never the agent's choice
    assert meter.requests == 1 and meter.tokens == reply.usage.total_tokens

    a_meter = Meter(Budget())
    a_token = gateway.grant(config(fake, "anthropic", "gw-tools-a"), a_meter, None)
    fake.script("gw-tools-a", Step(tool_calls=(ToolCall("bash", {"command": "ls"}),)))
    message = ant(gateway, a_token).messages.create(model="x", max_tokens=50, messages=MSG)
    assert message.stop_reason == "tool_use" and message.content[0].input == {"command": "ls"}
    assert fake.calls_for("gw-tools-a")[-1].key == KEY
    # the transcript: owner-only, every request and reply, the key nowhere
    gateway.revoke(token)
    path = tmp_path / "t.ndjson"
    assert stat.S_IMODE(os.stat(path).st_mode) == 0o600
    kinds = [json.loads(line)["kind"] for line in path.read_text().splitlines()]
    assert kinds == ["request", "attempt"] and KEY not in path.read_text()


def test_tokens_are_per_attempt_and_die_with_it(fake: FakeProvider, gateway: Gateway) -> None:
    token = gateway.grant(config(fake, "openai", "gw-tok"), Meter(Budget()), None)
    for bad in ("", "cogolf-guess", KEY, token + "x"):
        with pytest.raises(openai.AuthenticationError):
            oai(gateway, bad or "none").chat.completions.create(model="x", messages=MSG)
    oai(gateway, token).chat.completions.create(model="x", messages=MSG)
    gateway.revoke(token)
    with pytest.raises(openai.AuthenticationError):
        oai(gateway, token).chat.completions.create(model="x", messages=MSG)
    # an OpenAI model is not reachable through the Anthropic endpoint, and vice versa
    other = gateway.grant(config(fake, "openai", "gw-tok"), Meter(Budget()), None)
    with pytest.raises(anthropic.NotFoundError, match="chat/completions"):
        ant(gateway, other).messages.create(model="x", max_tokens=5, messages=MSG)


def test_max_requests_last_admitted_first_refused(fake: FakeProvider, gateway: Gateway) -> None:
    meter = Meter(Budget(max_requests=3))
    client = oai(gateway, gateway.grant(config(fake, "openai", "gw-req"), meter, None))
    for _ in range(3):
        client.chat.completions.create(model="x", messages=MSG)
    with pytest.raises(openai.BadRequestError, match="limit:requests: max_requests 3 reached"):
        client.chat.completions.create(model="x", messages=MSG)
    assert meter.limit == "requests" and len(fake.calls_for("gw-req")) == 3  # never forwarded


def test_max_tokens_caps_each_call_and_refuses_before_forwarding(
        fake: FakeProvider, gateway: Gateway) -> None:
    meter = Meter(Budget(max_tokens=60))
    client = oai(gateway, gateway.grant(config(fake, "openai", "gw-tokens"), meter, None))
    client.chat.completions.create(model="x", messages=MSG, max_tokens=1000)
    sent = fake.calls_for("gw-tokens")[-1].body
    assert 1 <= sent["max_tokens"] < 60  # the cap is what the budget leaves, not the 1000 asked
    while meter.limit is None:
        try:
            client.chat.completions.create(model="x", messages=MSG)
        except openai.BadRequestError as exc:
            assert "limit:tokens" in str(exc)
    assert meter.tokens <= 60


def test_max_cost_with_prices_and_a_provider_reported_cost(
        fake: FakeProvider, gateway: Gateway) -> None:
    cfg = config(fake, "openai", "gw-cost", input_price_per_mtok=1e5, output_price_per_mtok=1e5)
    meter = Meter(Budget(max_cost=5.0), Prices(1e5, 1e5))  # 0.1 per token
    client = oai(gateway, gateway.grant(cfg, meter, None))
    fake.script("gw-cost", Step("a", cost=4.0))
    client.chat.completions.create(model="x", messages=MSG)
    assert meter.cost == pytest.approx(4.0)  # the provider's own figure wins
    with pytest.raises(openai.BadRequestError, match="limit:cost"):
        client.chat.completions.create(model="x", messages=MSG)
    assert meter.limit == "cost" and len(fake.calls_for("gw-cost")) == 1


def test_streamed_calls_are_metered_whole(fake: FakeProvider, gateway: Gateway) -> None:
    meter = Meter(Budget(max_requests=2))
    client = oai(gateway, gateway.grant(config(fake, "openai", "gw-stream"), meter, None))
    fake.script("gw-stream", Step("hello world"))
    chunks = list(client.chat.completions.create(
        model="x", messages=MSG, stream=True, stream_options={"include_usage": True}))
    assert "".join(c.choices[0].delta.content or "" for c in chunks if c.choices) == \
        "hello world"
    usage = chunks[-1].usage
    assert usage is not None and meter.output_tokens == usage.completion_tokens
    assert "stream" not in fake.calls_for("gw-stream")[-1].body  # upstream is never streamed
    a_meter = Meter(Budget())
    a_client = ant(gateway, gateway.grant(config(fake, "anthropic", "gw-astream"), a_meter, None))
    fake.script("gw-astream", Step(tool_calls=(ToolCall("bash", {"command": "pwd"}),)))
    with a_client.messages.stream(model="x", max_tokens=50, messages=MSG) as stream:
        final = stream.get_final_message()
    assert final.content[0].input == {"command": "pwd"}
    assert a_meter.output_tokens == final.usage.output_tokens > 0


def test_parallel_calls_cannot_pass_the_budget_together(
        fake: FakeProvider, gateway: Gateway) -> None:
    meter = Meter(Budget(max_requests=4))
    token = gateway.grant(config(fake, "openai", "gw-par"), meter, None)
    fake.script("gw-par", *[Step("x", delay=0.3)] * 12)
    outcomes: list[str] = []

    def one() -> None:
        try:
            oai(gateway, token).chat.completions.create(model="x", messages=MSG)
            outcomes.append("ok")
        except openai.BadRequestError:
            outcomes.append("refused")

    threads = [threading.Thread(target=one) for _ in range(10)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert outcomes.count("ok") == 4 and outcomes.count("refused") == 6
    assert len(fake.calls_for("gw-par")) == 4


@pytest.mark.parametrize(("body", "why"), [
    ({"tools": [{"type": "web_search_preview"}]}, "web_search_preview"),
    ({"tools": [{"type": "code_interpreter"}]}, "code_interpreter"),
    ({"web_search_options": {}}, "web_search_options"),
    ({"n": 3}, "n must be 1"),
    ({"messages": [{"role": "user", "content": [{"type": "file", "file": {"file_id": "f"}}]}]},
     "'file' content is refused"),
])
def test_only_the_model_call_is_forwarded(fake: FakeProvider, gateway: Gateway,
                                          body: dict[str, Any], why: str) -> None:
    token = gateway.grant(config(fake, "openai", "gw-refuse"), Meter(Budget()), None)
    request = {"model": "x", "messages": MSG, **body}
    reply = httpx.post(gateway.openai_url + "/chat/completions", json=request,
                       headers={"authorization": f"Bearer {token}"})
    assert reply.status_code == 400 and why in reply.text
    assert not fake.calls_for("gw-refuse")


def test_anthropic_server_tools_and_other_endpoints_are_refused(
        fake: FakeProvider, gateway: Gateway) -> None:
    token = gateway.grant(config(fake, "anthropic", "gw-arefuse"), Meter(Budget()), None)
    headers = {"x-api-key": token}
    for extra in ({"tools": [{"type": "web_search_20250305", "name": "web_search"}]},
                  {"mcp_servers": [{"url": "http://x"}]}, {"container": "c"}):
        reply = httpx.post(gateway.anthropic_url + "/v1/messages", headers=headers,
                           json={"model": "x", "max_tokens": 5, "messages": MSG, **extra})
        assert reply.status_code == 400, extra
    for method, path in (("POST", "/v1/files"), ("GET", "/v1/batches"),
                         ("POST", "/v1/responses"), ("POST", "/v1/embeddings"),
                         ("GET", "/v1/chat/completions")):
        reply = httpx.request(method, gateway.anthropic_url + path, headers=headers)
        assert reply.status_code in (404, 405), path
    assert not fake.calls_for("gw-arefuse")
    models = httpx.get(gateway.openai_url + "/models", headers=headers).json()
    assert [m["id"] for m in models["data"]] == ["gw-arefuse"]


def test_a_hostile_provider_costs_the_call_never_the_gateway(
        gateway: Gateway, tmp_path: Path) -> None:
    with hostile.HostileProvider() as bad:
        cfg = from_table({"provider": "openai", "model": "m", "base_url": bad.url + "/v1",
                          "api_key_env": KEY_ENV, "request_timeout": 0.5})
        meter = Meter(Budget())
        token = gateway.grant(cfg, meter, tmp_path / "h.ndjson")
        client = oai(gateway, token)
        bad.script(hostile.hang_after_headers, hostile.trickle(0.05), hostile.endless(),
                   hostile.respond(b"{not json"), hostile.reset,
                   hostile.respond({}, 302, {"location": "http://example.com/"}),
                   hostile.respond(hostile.openai_body(f"the key is {KEY}")))
        for _ in range(6):
            with pytest.raises(openai.APIStatusError):
                client.chat.completions.create(model="x", messages=MSG)
        echoed = client.chat.completions.create(model="x", messages=MSG)
        assert KEY not in echoed.choices[0].message.content
        assert "[redacted]" in echoed.choices[0].message.content
        assert meter.provider_failures == 6 and not meter.last_failed
        gateway.revoke(token)
        assert KEY not in (tmp_path / "h.ndjson").read_text()
    # the gateway still serves
    assert httpx.get(gateway.openai_url + "/models").status_code == 401


def test_a_reply_without_usage_is_charged_its_whole_reservation(gateway: Gateway) -> None:
    body = hostile.openai_body("no usage here")
    del body["usage"]
    with hostile.HostileProvider(default=hostile.respond(body)) as bad:
        cfg = from_table({"provider": "openai", "model": "m", "base_url": bad.url + "/v1",
                          "api_key_env": KEY_ENV, "max_output_tokens": 100})
        meter = Meter(Budget(max_tokens=1000))
        client = oai(gateway, gateway.grant(cfg, meter, None))
        client.chat.completions.create(model="x", messages=MSG)
        assert meter.unmetered == 1 and meter.output_tokens == 100  # its full output cap
        sent = json.loads(bad.requests[-1].body)
        assert sent["max_tokens"] == 100


def test_the_request_size_bound(fake: FakeProvider, gateway: Gateway) -> None:
    from cogolf.agents.gateway import MAX_REQUEST_BYTES

    token = gateway.grant(config(fake, "openai", "gw-size"), Meter(Budget(max_tokens=1)), None)
    head = json.dumps({"model": "x", "messages": [{"role": "user", "content": ""}]})
    pad = MAX_REQUEST_BYTES - len(head)
    at_cap = head.replace('"content": ""', '"content": "' + "a" * pad + '"').encode()
    assert len(at_cap) == MAX_REQUEST_BYTES
    headers = {"authorization": f"Bearer {token}", "content-type": "application/json"}
    url = gateway.openai_url + "/chat/completions"
    accepted = httpx.post(url, content=at_cap, headers=headers, timeout=60)
    assert accepted.status_code == 400 and "limit:tokens" in accepted.text  # read, then metered
    over = httpx.post(url, content=at_cap.replace(b'"a', b'"aa', 1), headers=headers, timeout=60)
    assert over.status_code == 413 and str(MAX_REQUEST_BYTES) in over.text
    assert not fake.calls_for("gw-size")
