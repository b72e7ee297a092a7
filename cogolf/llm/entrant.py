"""An LLM entrant of a night file: `llm = "config.toml"` or `llm = { provider = ..., ... }`.

Either form becomes a policy reference the rest of the league passes around
unchanged: `llm:<absolute path>` for a file, `llm:<JSON of the table>` for an
inline table. Both are validated here, when the night file is read.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from cogolf.llm.config import LLMConfig, LLMConfigError, from_table, load_config

PREFIX = "llm:"


def llm_policy(value: Any, base: Path) -> str:
    """The policy reference of a night file's `llm` value; relative paths from `base`."""
    if isinstance(value, str):
        path = Path(value).expanduser()
        path = (path if path.is_absolute() else base / path).resolve()
        load_config(path)
        return f"{PREFIX}{path}"
    if isinstance(value, dict):
        from_table(value)
        return PREFIX + json.dumps(value, sort_keys=True, separators=(",", ":"))
    raise LLMConfigError(
        f"must be a path to a config file or an inline table, got {type(value).__name__}"
    )


def config_of(ref: str) -> LLMConfig:
    """The config behind the part of a policy reference after `llm:`."""
    if ref.startswith("{"):
        try:
            table = json.loads(ref)
        except ValueError as exc:
            raise LLMConfigError(f"inline config is not JSON: {exc}") from None
        return from_table(table, "inline llm config")
    return load_config(ref)
