"""The fake provider for the LLM tests, and configs pointing the real clients at it."""

from __future__ import annotations

from pathlib import Path
from typing import Any

import msgspec

from cogolf.deck import load_public
from cogolf.llm.config import LLMConfig, from_table
from cogolf.llm.fake import FakeProvider

KEY_ENV = "COGOLF_TEST_LLM_KEY"
KEY = "sk-test-7f3a9c1e5b2d4f60a8e1-do-not-leak"
PROVIDERS = ("openai", "anthropic")
DECK = load_public()


def table(fake: FakeProvider, provider: str, model: str, **more: Any) -> dict[str, Any]:
    url = fake.openai_url if provider == "openai" else fake.anthropic_url
    return {
        "provider": provider,
        "model": model,
        "base_url": url,
        "api_key_env": KEY_ENV,
        "request_timeout": 30.0,
        **more,
    }


def config(fake: FakeProvider, provider: str, model: str, **more: Any) -> LLMConfig:
    return from_table(table(fake, provider, model, **more))


def write_config(path: Path, fake: FakeProvider, provider: str, model: str, **more: Any) -> Path:
    lines = []
    for key, value in table(fake, provider, model, **more).items():
        lines.append(f"{key} = {value!r}".replace("'", '"'))
    path.write_text("\n".join(lines) + "\n")
    return path


def observation(key: str | None = None, hole: int = 1, history: Any = ()) -> dict[str, Any]:
    """A Cogolf observation of a core spec, shaped as the server sends it."""
    key = key or sorted(DECK.specs)[0]
    return {
        "hole": hole,
        "holes": 9,
        "spec": msgspec.to_builtins(DECK.specs[key].spec),
        "you": {"alias": "Ash", "slot": 0, "score": 0},
        "opponent": {"alias": "Basil", "slot": 1, "score": 0},
        "history": list(history),
        "rules": {"max_tests": 5, "max_impl_chars": 4000},
    }


def all_text(root: Path) -> list[tuple[Path, bytes]]:
    """Every regular file under `root`, with its bytes."""
    return [(p, p.read_bytes()) for p in sorted(root.rglob("*")) if p.is_file()]
