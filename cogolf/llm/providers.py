"""One call to a chat model through the official client, and what can go wrong with it.

Both clients are built with their own retries off: the player decides whether
another attempt fits in the seat's deadline. Every failure becomes a
`ProviderError` whose `retryable` says whether trying again can help (429,
5xx, timeouts, dropped connections, truncated or refused replies) and whose
`retry_after` carries the provider's own hint.

The clients' HTTP layer is hardened against a hostile provider: redirects are
never followed (the request, prompt included, would go to any origin named), a reply
body is cut at `MAX_BODY_BYTES`, and the request timeout bounds the whole
request, body included, not each read (a reply trickled byte by byte would
otherwise hold the request for ever).
"""

from __future__ import annotations

import email.utils
import sys
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from cogolf.llm.config import LLMConfig

MAX_BODY_BYTES = 4 << 20  # a reply is at most 200,000 characters (replies.MAX_REPLY_CHARS)
_STARTED = "cogolf_started"  # request extension: when the request was sent (monotonic)
NO_KEY = "no-key"  # for servers that need none; the clients insist on some value
RETRYABLE_STATUS = {408, 409, 425, 429}
UNREACHABLE = "provider_unreachable"  # a walled seat's gateway: the provider is not there


@dataclass(frozen=True)
class Reply:
    text: str
    finish: str  # the provider's stop reason, as it reported it
    input_tokens: int = 0
    output_tokens: int = 0
    cost: float | None = None  # only when the provider reports one


class ProviderError(Exception):
    def __init__(
        self,
        kind: str,
        message: str,
        *,
        retryable: bool,
        status: int | None = None,
        retry_after: float | None = None,
        reply: Reply | None = None,
    ) -> None:
        super().__init__(message)
        self.kind, self.retryable, self.status = kind, retryable, status
        self.retry_after, self.reply = retry_after, reply


def retry_after(headers: Any) -> float | None:
    """Seconds from `retry-after-ms` or `retry-after` (seconds or an HTTP date)."""
    if headers is None:
        return None
    value = headers.get("retry-after-ms")
    if value:
        try:
            return max(0.0, float(value) / 1000)
        except ValueError:
            pass
    value = headers.get("retry-after")
    if not value:
        return None
    try:
        return max(0.0, float(value))
    except ValueError:
        pass
    try:
        when = email.utils.parsedate_to_datetime(value) if "," in value else None
        return max(0.0, when.timestamp() - time.time()) if when is not None else None
    except (TypeError, ValueError, OverflowError):
        return None  # a hint that is no date: the player's own backoff applies


class Redirected(Exception):
    """The provider answered with a redirect, which is never followed."""


def _http_library(module: Any) -> Any:
    """The HTTP library the client is built on (`httpx`, or its successor in newer clients)."""
    base = module.DefaultHttpxClient.__mro__[1]
    return sys.modules[base.__module__.partition(".")[0]]


def _bounded_stream(lib: Any, inner: Any, deadline: float) -> Any:
    """`inner`, a reply body, read at most up to MAX_BODY_BYTES and until `deadline`."""

    class Bounded(lib.SyncByteStream):  # type: ignore[misc, name-defined]
        def __iter__(self) -> Iterator[bytes]:
            total = 0
            for chunk in inner:
                total += len(chunk)
                if total > MAX_BODY_BYTES:
                    raise lib.ReadError(f"the reply is over {MAX_BODY_BYTES} bytes")
                if time.monotonic() > deadline:
                    raise lib.ReadTimeout("the reply did not arrive within the request timeout")
                yield chunk

        def close(self) -> None:
            inner.close()

    return Bounded()


def http_client(module: Any) -> Any:
    """The client's own HTTP client (proxies, limits) with the defences above."""
    lib = _http_library(module)

    def started(request: Any) -> None:
        request.extensions[_STARTED] = time.monotonic()

    def bounded(response: Any) -> None:
        if response.is_redirect:
            # The target is not repeated: it is the provider's text.
            raise Redirected(f"HTTP {response.status_code}: a redirect, not followed")
        request = response.request
        timeouts = [t for t in request.extensions.get("timeout", {}).values() if t is not None]
        begun = request.extensions.get(_STARTED, time.monotonic())
        deadline = begun + max(timeouts) if timeouts else float("inf")
        response.stream = _bounded_stream(lib, response.stream, deadline)

    return module.DefaultHttpxClient(
        follow_redirects=False, event_hooks={"request": [started], "response": [bounded]}
    )


def _count(value: Any) -> int:
    """A token count as reported; anything but a plain non-negative int counts 0."""
    return value if type(value) is int and value >= 0 else 0


def _error_type(body: Any) -> Any:
    error = body.get("error", body) if isinstance(body, dict) else None
    return error.get("type") if isinstance(error, dict) else None


def _status_error(exc: Any) -> ProviderError:
    status = int(getattr(exc, "status_code", 0) or 0)
    headers = getattr(getattr(exc, "response", None), "headers", None)
    kind = "rate_limited" if status == 429 else "server_error" if status >= 500 else "rejected"
    if status == 502 and _error_type(getattr(exc, "body", None)) == UNREACHABLE:
        kind = "connection"  # the gateway could not connect to the provider behind it
    return ProviderError(
        kind,
        f"HTTP {status}: {getattr(exc, 'message', exc)}",
        retryable=status >= 500 or status in RETRYABLE_STATUS,
        status=status,
        retry_after=retry_after(headers),
    )


def _mapped(exc: Exception, module: Any) -> ProviderError:
    if isinstance(exc, module.APITimeoutError):
        return ProviderError("timeout", "the request timed out", retryable=True)
    if isinstance(exc, module.APIStatusError):
        return _status_error(exc)
    for cause in (exc, exc.__cause__):
        if isinstance(cause, Redirected):
            return ProviderError("redirected", str(cause), retryable=False)
    if isinstance(exc, module.APIConnectionError):
        return ProviderError("connection", f"connection failed: {exc}", retryable=True)
    # Anything else the client raised reading a hostile reply (a JSON bomb, a wrong
    # shape): the provider's fault, so retried; only the type is kept, as the
    # message may quote the reply.
    return ProviderError("bad_response", f"unusable reply ({type(exc).__name__})", retryable=True)


def _checked(reply: Reply, truncated: bool, refused: bool) -> Reply:
    if refused:
        raise ProviderError("refusal", "the model refused", retryable=True, reply=reply)
    if truncated:
        raise ProviderError(
            "truncated", "the reply was cut at max_output_tokens", retryable=True, reply=reply
        )
    if not reply.text.strip():
        raise ProviderError("empty", "the reply has no text", retryable=True, reply=reply)
    return reply


class Provider:
    """A chat model behind one of the official clients (imported here, on first use)."""

    def __init__(self, config: LLMConfig) -> None:
        self.config = config
        key = config.api_key() or NO_KEY
        if config.provider == "openai":
            import openai

            self._module: Any = openai
            self._client: Any = openai.OpenAI(
                api_key=key,
                base_url=config.base_url,
                max_retries=0,
                timeout=config.request_timeout,
                http_client=http_client(openai),
            )
        else:
            import anthropic

            self._module = anthropic
            self._client = anthropic.Anthropic(
                api_key=key,
                base_url=config.base_url,
                max_retries=0,
                timeout=config.request_timeout,
                http_client=http_client(anthropic),
            )

    def close(self) -> None:
        self._client.close()

    def complete(self, system: str, messages: list[dict[str, str]], timeout: float) -> Reply:
        try:
            if self.config.provider == "openai":
                return self._openai(system, messages, timeout)
            return self._anthropic(system, messages, timeout)
        except ProviderError:
            raise
        except Exception as exc:
            raise _mapped(exc, self._module) from None

    def _common(self) -> dict[str, Any]:
        args: dict[str, Any] = {"model": self.config.model}
        if self.config.temperature is not None:
            args["temperature"] = self.config.temperature
        if self.config.extra:
            args["extra_body"] = dict(self.config.extra)
        return args

    def _openai(self, system: str, messages: list[dict[str, str]], timeout: float) -> Reply:
        response = self._client.chat.completions.create(
            messages=[{"role": "system", "content": system}, *messages],
            max_tokens=self.config.max_output_tokens,
            timeout=timeout,
            **self._common(),
        )
        usage = response.usage
        extra = (getattr(usage, "model_extra", None) or {}) if usage is not None else {}
        cost = extra.get("cost")
        if not response.choices:
            raise ProviderError("empty", "the reply has no choices", retryable=True)
        choice = response.choices[0]
        message = choice.message
        reply = Reply(
            text=message.content or "",
            finish=str(choice.finish_reason or ""),
            input_tokens=_count(getattr(usage, "prompt_tokens", 0)),
            output_tokens=_count(getattr(usage, "completion_tokens", 0)),
            cost=float(cost) if type(cost) in (int, float) and 0 <= cost < 1e9 else None,
        )
        refused = bool(getattr(message, "refusal", None)) or reply.finish == "content_filter"
        return _checked(reply, reply.finish == "length", refused)

    def _anthropic(self, system: str, messages: list[dict[str, str]], timeout: float) -> Reply:
        response = self._client.messages.create(
            system=system,
            messages=messages,
            max_tokens=self.config.max_output_tokens,
            timeout=timeout,
            **self._common(),
        )
        text = "".join(getattr(b, "text", "") for b in response.content if b.type == "text")
        usage = response.usage
        reply = Reply(
            text=text,
            finish=str(response.stop_reason or ""),
            input_tokens=_count(getattr(usage, "input_tokens", 0)),
            output_tokens=_count(getattr(usage, "output_tokens", 0)),
        )
        return _checked(reply, reply.finish == "max_tokens", reply.finish == "refusal")
