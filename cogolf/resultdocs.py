"""Reading a folder of result documents, the same way for every offline game.

An offline game's result is one JSON document per file whose `game` field names
the game, so one folder may hold several games' results: each game reads its
own and skips the others'.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from pathlib import Path
from typing import Any, TypeVar

R = TypeVar("R")


def load_records(
    folder: Path,
    game: str,
    read: Callable[[Any, str], R],
    error: Callable[[str], Exception],
) -> list[R]:
    """Every `*.json` result of `game` under `folder`, read with `read(data, source)`;
    a file that is not JSON raises `error` naming it."""
    records = []
    for path in sorted(folder.rglob("*.json")):
        try:
            data = json.loads(path.read_text(encoding="utf-8"))
        except (OSError, ValueError) as exc:
            raise error(f"{path}: cannot read as JSON: {exc}") from exc
        if isinstance(data, dict) and data.get("game") == game:
            records.append(read(data, str(path)))
    return records
