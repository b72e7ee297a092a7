"""The model gateway: the one address a walled agent can reach, and the only holder of the key.

An OpenAI- and Anthropic-compatible endpoint on loopback. Each attempt is given a
token valid only here and only while it runs; a call is checked (token, path,
fields, budgets) before anything is forwarded, forwarded to the entrant's configured
provider with the real key from the operator's environment, metered, written to the
attempt's transcript (0600, the key redacted) and answered with the key redacted.

Only `POST /v1/chat/completions`, `POST /v1/messages` and `GET /v1/models` exist;
anything else is a 404. A hostile provider (slow, hanging, huge, malformed, echoing
the key) costs the call its request timeout and a failure on the attempt's meter,
never the gateway: redirects are not followed, a reply is cut at 4 MiB and the
timeout bounds the whole request (`upstream`: one POST on a kept-alive connection).
"""

from __future__ import annotations

import asyncio
import hashlib
import json
import secrets
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import httpx
import structlog
from starlette.applications import Starlette
from starlette.requests import Request
from starlette.responses import JSONResponse, Response, StreamingResponse
from starlette.routing import Route

from cogolf.agents import wire
from cogolf.agents.meter import Meter, OverBudget, Reservation
from cogolf.agents.upstream import Upstream
from cogolf.llm.config import LLMConfig
from cogolf.llm.redact import Redactor
from cogolf.llm.transcript import Transcript
from cogolf.loopback import LoopbackServer

log = structlog.get_logger(__name__)

MAX_REQUEST_BYTES = 8 << 20  # an agent's whole context (200k tokens is ~1 MiB), with room
MAX_REPLY_BYTES = 4 << 20
TOKEN_PREFIX = "cogolf-"
ANTHROPIC_VERSION = "2023-06-01"
# Statuses that are the agent's request's fault, not the provider's or the harness's.
AGENT_FAULT = {400, 404, 413, 422}
UNREACHABLE = "provider_unreachable"  # the error type of a call the provider never took


@dataclass
class Grant:
    """One attempt's right to call its entrant's model."""

    config: LLMConfig
    key: str | None
    meter: Meter
    transcript: Transcript | None
    label: str
    redact: Redactor = field(init=False)

    def __post_init__(self) -> None:
        self.redact = Redactor(self.key)


def _hash(token: str) -> bytes:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).digest()


def _error(api: str, status: int, kind: str, message: str) -> JSONResponse:
    if api == "anthropic":
        body: dict[str, Any] = {"type": "error", "error": {"type": kind, "message": message}}
    else:
        body = {"error": {"type": kind, "code": kind, "message": message}}
    return JSONResponse(body, status)


class Gateway:
    def __init__(self, *, client: str = "h11") -> None:
        """`client`: "h11" (`upstream`), or "httpx", kept to measure one beside the other."""
        self._grants: dict[bytes, Grant] = {}
        self._lock = threading.Lock()
        self.app = Starlette(routes=[
            Route("/v1/chat/completions", self._openai, methods=["POST"]),
            Route("/v1/messages", self._anthropic, methods=["POST"]),
            Route("/v1/models", self._models, methods=["GET"]),
            Route("/{rest:path}", self._nothing,
                  methods=["GET", "POST", "PUT", "DELETE", "PATCH", "HEAD", "OPTIONS"]),
        ])
        self._server = LoopbackServer(self.app, "model gateway", limit_concurrency=256)
        self._client: httpx.AsyncClient | None = None
        self._upstream: Upstream | None = None
        self._use_httpx = client == "httpx"
        self.port = 0
        self.latencies: list[float] = []  # seconds the gateway itself adds per call

    # --- grants ------------------------------------------------------------------

    def grant(self, config: LLMConfig, meter: Meter, transcript: Path | None,
              label: str = "") -> str:
        """A fresh token for one attempt; the key is read now from the environment."""
        token = TOKEN_PREFIX + secrets.token_urlsafe(24)
        key = config.api_key()
        redact = Redactor(key)
        record = Transcript(transcript, redact) if transcript is not None else None
        with self._lock:
            self._grants[_hash(token)] = Grant(config, key, meter, record, label)
        return token

    def revoke(self, token: str) -> None:
        with self._lock:
            grant = self._grants.pop(_hash(token), None)
        if grant is not None and grant.transcript is not None:
            grant.transcript.close()

    def _grant(self, request: Request) -> Grant | None:
        given = request.headers.get("x-api-key") or ""
        auth = request.headers.get("authorization", "")
        if not given and auth[:7].lower() == "bearer ":
            given = auth[7:].strip()
        with self._lock:
            return self._grants.get(_hash(given)) if given else None

    # --- routes ------------------------------------------------------------------

    async def _nothing(self, request: Request) -> Response:
        return _error("openai", 404, "not_found",
                      "the gateway serves only POST /v1/chat/completions, POST /v1/messages "
                      "and GET /v1/models")

    async def _models(self, request: Request) -> Response:
        grant = self._grant(request)
        if grant is None:
            return _error("openai", 401, "invalid_api_key", "no valid attempt token")
        model = {"id": grant.config.model, "object": "model", "created": 0, "owned_by": "cogolf",
                 "type": "model", "display_name": grant.config.model}
        return JSONResponse({"object": "list", "data": [model], "has_more": False})

    async def _openai(self, request: Request) -> Response:
        return await self._call(request, "openai")

    async def _anthropic(self, request: Request) -> Response:
        return await self._call(request, "anthropic")

    async def _call(self, request: Request, api: str) -> Response:
        began = time.monotonic()
        grant = self._grant(request)
        if grant is None:
            return _error(api, 401, "invalid_api_key", "no valid attempt token")
        if grant.config.provider != api:
            other = "/v1/chat/completions" if grant.config.provider == "openai" else "/v1/messages"
            return _error(api, 404, "not_found",
                          f"this attempt's model speaks the {grant.config.provider} API: "
                          f"call {other}")
        data = await _read_body(request)
        if data is None:
            return _error(api, 413, "request_too_large",
                          f"the request is over {MAX_REQUEST_BYTES} bytes")
        try:
            body = wire.parse_body(data)
            vet = wire.vet_openai if api == "openai" else wire.vet_anthropic
            forward, want, stream = vet(body, grant.config)
        except wire.Refused as exc:
            self._note(grant, "refused", reason=str(exc))
            return _error(api, 400, "invalid_request_error", str(exc))
        try:
            reservation = grant.meter.reserve(wire.estimate_tokens(data), want)
        except OverBudget as exc:
            self._note(grant, "refused", reason=str(exc), limit=exc.which)
            return _error(api, 400, "budget_exceeded", f"limit:{exc.which}: {exc}")
        payload = wire.finalize(forward, reservation.output_tokens)
        self._note(grant, "request", api=api, body=json.loads(payload))
        overhead = time.monotonic() - began
        reply, answered = await self._forward(grant, api, payload, reservation)
        self.latencies.append(overhead + (time.monotonic() - answered))
        if isinstance(reply, Response):
            return reply
        if stream:
            include = bool((body.get("stream_options") or {}).get("include_usage"))
            chunks: Iterator[bytes] = (wire.stream_openai(reply, include) if api == "openai"
                                       else wire.stream_anthropic(reply))
            return StreamingResponse(chunks, media_type="text/event-stream")
        return JSONResponse(reply)

    async def _forward(self, grant: Grant, api: str, payload: bytes,
                       reservation: Reservation) -> tuple[dict[str, Any] | Response, float]:
        config = grant.config
        if api == "openai":
            url = (config.base_url or "https://api.openai.com/v1").rstrip("/") + \
                "/chat/completions"
            headers = {"authorization": f"Bearer {grant.key or 'no-key'}"}
        else:
            url = (config.base_url or "https://api.anthropic.com").rstrip("/") + "/v1/messages"
            headers = {"x-api-key": grant.key or "no-key", "anthropic-version": ANTHROPIC_VERSION}
        headers["content-type"] = "application/json"
        sent = time.monotonic()
        try:
            status, raw = await asyncio.wait_for(self._post(url, headers, payload),
                                                 config.request_timeout)
        except (TimeoutError, httpx.HTTPError, OSError) as exc:
            grant.meter.fail(reservation, provider=True)
            kind = "provider_error"
            if isinstance(exc, TimeoutError):
                why = "the provider did not answer within the request timeout"
            else:
                # Told apart, so an LLM seat stops retrying a provider that is not there.
                kind = UNREACHABLE if isinstance(exc, httpx.ConnectError | OSError) else kind
                why = (f"the provider could not be reached at {grant.redact.shown(url)} "
                       f"({type(exc).__name__})")
            self._note(grant, "attempt", status="failed", error=why,
                       latency=round(time.monotonic() - sent, 3))
            return _error(api, 502, kind, why), time.monotonic()
        answered = time.monotonic()
        text = grant.redact(raw.decode("utf-8", "replace"))
        latency = round(answered - sent, 3)
        if status != 200:
            grant.meter.fail(reservation, provider=status not in AGENT_FAULT)
            shown = grant.redact.shown(text)
            self._note(grant, "attempt", status="failed", http_status=status, error=shown,
                       latency=latency)
            code = status if 400 <= status < 600 else 502
            return _error(api, code, "provider_error",
                          f"the provider answered HTTP {status}: {shown}"), answered
        try:
            reply = json.loads(text)
            if not isinstance(reply, dict):
                raise ValueError("not an object")
        except (ValueError, RecursionError):
            grant.meter.fail(reservation, provider=True)
            self._note(grant, "attempt", status="failed", error="the reply is not JSON",
                       latency=latency)
            return _error(api, 502, "provider_error", "the provider's reply is not JSON"), answered
        tokens_in, tokens_out, cost = grant.meter.settle(reservation, *wire.usage(api, reply))
        self._note(grant, "attempt", status="ok", latency=latency, input_tokens=tokens_in,
                   output_tokens=tokens_out, cost=cost, reply=reply)
        return reply, answered

    async def _post(self, url: str, headers: dict[str, str], payload: bytes) -> tuple[int, bytes]:
        if not self._use_httpx:
            if self._upstream is None:
                self._upstream = Upstream()
            status, body = await self._upstream.post(url, headers, payload, MAX_REPLY_BYTES)
            return (status, b"a redirect, not followed") if 300 <= status < 400 else (status, body)
        if self._client is None:
            self._client = httpx.AsyncClient(follow_redirects=False, trust_env=False,
                                             timeout=httpx.Timeout(None))
        async with self._client.stream("POST", url, headers=headers, content=payload) as resp:
            kept = bytearray()
            async for chunk in resp.aiter_bytes():
                kept += chunk
                if len(kept) > MAX_REPLY_BYTES:
                    raise httpx.ReadError(f"the reply is over {MAX_REPLY_BYTES} bytes")
            if resp.is_redirect:
                return resp.status_code, b"a redirect, not followed"
            return resp.status_code, bytes(kept)

    @staticmethod
    def _note(grant: Grant, kind: str, **fields: Any) -> None:
        if grant.transcript is not None:
            grant.transcript.write(kind, **fields)

    # --- serving -----------------------------------------------------------------

    @property
    def openai_url(self) -> str:
        return f"http://127.0.0.1:{self.port}/v1"

    @property
    def anthropic_url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def start(self) -> Gateway:
        self.port = self._server.start()
        return self

    def stop(self) -> None:
        self._server.stop()

    def __enter__(self) -> Gateway:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


async def _read_body(request: Request) -> bytes | None:
    kept = bytearray()
    async for chunk in request.stream():
        kept += chunk
        if len(kept) > MAX_REQUEST_BYTES:
            return None
    return bytes(kept)
