"""Naming and loading policies: built-in names, `file.py:name` and `module:name`."""

from __future__ import annotations

import importlib
import importlib.util
import inspect
from collections.abc import Callable
from pathlib import Path
from typing import Any

Observation = dict[str, Any]
Play = dict[str, Any]
Policy = Callable[[Observation], Play]


class PolicyError(ValueError):
    """A policy reference that cannot be loaded, with the reason."""


def builtin_names() -> list[str]:
    from cogolf.bots.scripted import SCRIPTED

    return sorted(SCRIPTED)


LLM_PREFIX = "llm:"  # `llm:CONFIG.toml`: a chat model plays (the `cogolf[llm]` extra)


def load_llm_policy(config_path: str) -> Policy:
    """The LLM player of a config file; its provider client is imported only on first use."""
    from cogolf.llm.config import LLMConfigError
    from cogolf.llm.player import player_from_ref

    try:
        return player_from_ref(config_path)
    except LLMConfigError as exc:
        shown = "an inline config" if config_path.startswith("{") else config_path
        said = str(exc)
        if said.startswith(f"{config_path}: "):  # the file is named once
            said = said[len(config_path) + 2 :]
        raise PolicyError(f"llm ({shown}): {said}") from None


def seat_name(ref: str) -> str:
    """The name a match records for a policy: an LLM seat by its config file's stem."""
    if ref.startswith(LLM_PREFIX) and not ref[len(LLM_PREFIX) :].startswith("{"):
        return f"{LLM_PREFIX}{Path(ref[len(LLM_PREFIX) :]).stem}"[:64]
    return ref


def load_policy(ref: str, *, deck_dir: Path | None = None) -> Policy:
    """Resolve a policy reference to a callable, instantiating classes once."""
    from cogolf.bots.scripted import SCRIPTED, scripted_policy

    if ref in SCRIPTED:
        return scripted_policy(ref, deck_dir)
    if ref.startswith(LLM_PREFIX):
        return load_llm_policy(ref[len(LLM_PREFIX) :])
    target, sep, name = ref.rpartition(":")
    if not sep or not target or not name:
        raise PolicyError(
            f"policy {ref!r}: expected one of {', '.join(builtin_names())}, "
            "'path/to/file.py:name', 'module:name' or 'llm:CONFIG.toml'"
        )
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise PolicyError(f"policy {ref!r}: no file {target}")
        spec = importlib.util.spec_from_file_location(f"cogolf_policy_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise PolicyError(f"policy {ref!r}: cannot load {target}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise PolicyError(
                f"policy {ref!r}: {target} raised {type(exc).__name__}: {exc}"
            ) from exc
    else:
        try:
            module = importlib.import_module(target)
        except Exception as exc:
            raise PolicyError(f"policy {ref!r}: cannot import {target}: {exc}") from exc
    obj = getattr(module, name, None)
    if obj is None:
        raise PolicyError(f"policy {ref!r}: {target} has no attribute {name!r}")
    if inspect.isclass(obj):
        instance = obj()
        play = getattr(instance, "play", None)
        if not callable(play):
            raise PolicyError(f"policy {ref!r}: class {name} has no play(observation) method")
        return play
    if not callable(obj):
        raise PolicyError(f"policy {ref!r}: {name} is not callable")
    return obj


def complete_play(play: Any, hole: int) -> Any:
    """Fill in `type` and `hole` so a policy may return just impl, tests and note."""
    if isinstance(play, dict):
        play = {"type": "submission", "hole": hole, **play}
    return play
