"""The LLM player's configuration: a TOML file (or a night file's `llm = {...}` table).

Validated strictly with msgspec so a typo is caught before a night starts. The
key itself never appears in a file: the config names the environment variable
that holds it, and no error message ever repeats a value that might be a key.
"""

from __future__ import annotations

import difflib
import json
import os
import re
import tomllib
from pathlib import Path
from typing import Annotated, Any, Literal
from urllib.parse import urlsplit

import msgspec

ENV_NAME = re.compile(r"^[A-Za-z_][A-Za-z0-9_]{0,127}$")
# Fields the player sets itself: passing them through `extra` would silently change the game.
RESERVED_EXTRA = {"model", "messages", "system", "max_tokens", "max_completion_tokens", "stream"}
SECRET_FIELDS = {"api_key", "key", "token", "secret", "password"}
MAX_FILE_BYTES = 64 << 10  # a config is a few lines
MAX_DEPTH = 32  # of tables and arrays in `extra`


class LLMConfigError(ValueError):
    """A configuration that cannot be used; the message names the file and the field."""


class LLMConfig(msgspec.Struct, forbid_unknown_fields=True, frozen=True, kw_only=True):
    provider: Literal["openai", "anthropic"]
    model: Annotated[str, msgspec.Meta(min_length=1, max_length=200)]
    base_url: Annotated[str, msgspec.Meta(pattern=r"^https?://", max_length=500)] | None = None
    # The name of the environment variable holding the key (None: a server needing none).
    api_key_env: str | None = None
    temperature: Annotated[float, msgspec.Meta(ge=0, le=2)] | None = None
    max_output_tokens: Annotated[int, msgspec.Meta(ge=1, le=1_000_000)] = 4096
    request_timeout: Annotated[float, msgspec.Meta(gt=0, le=3600)] = 60.0
    # Passed through as-is in the request body (e.g. top_p, reasoning settings).
    extra: dict[str, Any] = msgspec.field(default_factory=dict)
    # Prices in the provider's currency per million tokens, for providers that do not
    # report a cost themselves.
    input_price_per_mtok: Annotated[float, msgspec.Meta(ge=0)] | None = None
    output_price_per_mtok: Annotated[float, msgspec.Meta(ge=0)] | None = None

    def api_key(self) -> str | None:
        """The key from the environment; raises when the named variable is unset."""
        if self.api_key_env is None:
            return None
        value = os.environ.get(self.api_key_env)
        if not value:
            raise LLMConfigError(
                f"api_key_env: the environment variable {self.api_key_env} is unset"
            )
        return value


def from_table(table: Any, where: str = "") -> LLMConfig:
    """Validate a decoded TOML table; `where` (a file) prefixes every error."""
    try:
        return _from_table(table)
    except LLMConfigError as exc:
        raise LLMConfigError(f"{where}: {exc}" if where else str(exc)) from None


def _from_table(table: Any) -> LLMConfig:
    if not isinstance(table, dict):
        raise LLMConfigError(f"must be a table, got {type(table).__name__}")
    extra = table.get("extra")
    nested = [f"extra.{n}" for n in extra] if isinstance(extra, dict) else []
    for name in [*table, *nested]:
        if name.rpartition(".")[2].lower() in SECRET_FIELDS:
            raise LLMConfigError(
                f"{name}: a key never goes in a file; name the environment "
                "variable that holds it in api_key_env"
            )
    env = table.get("api_key_env")
    if env is not None and (not isinstance(env, str) or not ENV_NAME.match(env)):
        # The value is not repeated: a key pasted here by mistake must not reach a log.
        raise LLMConfigError(
            "api_key_env: must be the name of an environment variable "
            "(letters, digits and '_'), not the key itself"
        )
    if _depth(table) > MAX_DEPTH:
        raise LLMConfigError(f"extra: nested deeper than {MAX_DEPTH} levels")
    # Every unknown field (with the one probably meant) and the provider, in one message,
    # with the fields and providers there are.
    known = [f.encode_name for f in msgspec.structs.fields(LLMConfig)]
    said = [f"{name}: unknown field{_meant(name, known)}" for name in table if name not in known]
    providers = f"{' or '.join(PROVIDERS)} (openai for any OpenAI-compatible server)"
    provider = table.get("provider")
    if provider is None:
        said.append(f"missing required field 'provider': {providers}")
    elif provider not in PROVIDERS:
        shown = f"{provider[:40]!r}" if isinstance(provider, str) else type(provider).__name__
        said.append(f"provider: {shown} is not a provider: {providers}")
    if said:
        strays = any(name not in known for name in table)
        fields = f" (the fields: {', '.join(known)})" if strays else ""
        raise LLMConfigError("; ".join(said) + fields)
    try:
        config = msgspec.convert(table, LLMConfig)
    except msgspec.ValidationError as exc:
        raise LLMConfigError(str(exc)) from None
    try:
        json.dumps(config.extra, allow_nan=False)
    except (TypeError, ValueError):
        raise LLMConfigError(
            "extra: only JSON values (strings, numbers, booleans, arrays, tables)"
        ) from None
    clash = sorted(RESERVED_EXTRA & set(config.extra))
    if clash:
        raise LLMConfigError(f"extra: {', '.join(clash)} is set by the player")
    if config.base_url is not None:
        _check_url(config.base_url)
    return config


PROVIDERS = ("openai", "anthropic")


def _meant(name: str, known: list[str]) -> str:
    close = difflib.get_close_matches(name, known, 1, 0.75)
    return f" (did you mean {close[0]!r}?)" if close else ""


def _check_url(url: str) -> None:
    """A base URL carries no credentials: they would sit in a file, in `ps` and in errors.
    The value is not repeated, as it may hold one."""
    try:
        parts = urlsplit(url)
        parts.port  # noqa: B018 - raises on a port that is not a number
    except ValueError:
        raise LLMConfigError("base_url: not a valid URL") from None
    if parts.username is not None or parts.password is not None:
        raise LLMConfigError(
            "base_url: credentials in the URL (user:password@) are refused; "
            "name the environment variable that holds the key in api_key_env"
        )
    if parts.query or parts.fragment:
        raise LLMConfigError(
            "base_url: a query (?...) or fragment (#...) is refused, as it may hold a key; "
            "name the environment variable that holds the key in api_key_env"
        )
    if not parts.hostname:
        raise LLMConfigError("base_url: no host")


def _depth(value: Any, level: int = 0) -> int:
    """How deeply `value` nests, counted no further than just past MAX_DEPTH."""
    if level > MAX_DEPTH:
        return level
    items = value.values() if isinstance(value, dict) else value if isinstance(value, list) else ()
    return max((_depth(item, level + 1) for item in items), default=level)


def load_config(path: Path | str) -> LLMConfig:
    path = Path(path)
    try:
        with path.open("rb") as f:
            data = f.read(MAX_FILE_BYTES + 1)
        text = data.decode("utf-8")
    except OSError as exc:
        raise LLMConfigError(f"{path}: cannot read ({exc.strerror or exc})") from None
    except UnicodeDecodeError:
        raise LLMConfigError(f"{path}: cannot read (not UTF-8)") from None
    if len(data) > MAX_FILE_BYTES:
        raise LLMConfigError(f"{path}: over {MAX_FILE_BYTES} bytes; a config is a few lines")
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise LLMConfigError(f"{path}: not valid TOML: {exc}") from None
    except RecursionError:
        raise LLMConfigError(f"{path}: not valid TOML: nested too deeply") from None
    return from_table(doc, str(path))
