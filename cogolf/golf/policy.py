"""Loading an in-process golf policy: `file.py:name` or `module:name`.

A policy is a function from an observation dict to a submission dict
({"source": ...}); it lets a bot author try a player without a server.
"""

from __future__ import annotations

import importlib
import importlib.util
from collections.abc import Callable
from pathlib import Path
from typing import Any

Policy = Callable[[dict[str, Any]], Any]


class PolicyError(ValueError):
    """A policy reference that does not name a callable."""


def load_policy(ref: str) -> Policy:
    target, sep, name = ref.rpartition(":")
    if not sep or not target or not name:
        raise PolicyError(f"--bot: expected FILE.py:NAME or MODULE:NAME, got {ref!r}")
    if target.endswith(".py"):
        path = Path(target)
        if not path.is_file():
            raise PolicyError(f"--bot: {path} does not exist")
        spec = importlib.util.spec_from_file_location(f"golf_policy_{path.stem}", path)
        if spec is None or spec.loader is None:
            raise PolicyError(f"--bot: cannot load {path}")
        module = importlib.util.module_from_spec(spec)
        try:
            spec.loader.exec_module(module)
        except Exception as exc:
            raise PolicyError(f"--bot: {path} raised {type(exc).__name__}: {exc}") from exc
    else:
        try:
            module = importlib.import_module(target)
        except ImportError as exc:
            raise PolicyError(f"--bot: cannot import {target!r} ({exc})") from exc
    fn = getattr(module, name, None)
    if not callable(fn):
        raise PolicyError(f"--bot: {target} has no callable named {name!r}")
    return fn
