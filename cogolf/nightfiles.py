"""Helpers every night game shares: task folders of a section, task names, result writes.

A night game (`cogolf.game.NightGame`) reads its night-file section and writes
its result files with these, so the rules (how many tasks, which names can name
a file, atomic writes) are the same for every game.
"""

from __future__ import annotations

import json
import os
import re
from pathlib import Path
from typing import Any

from cogolf import safejson
from cogolf.game import Section, SectionError

MAX_TASKS = 64
MAX_RESULT_BYTES = 8 * 1024 * 1024
TASK_NAME = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,79}$")


def resolve(base: Path, text: str) -> Path:
    """A path of the night file: relative ones are relative to its folder."""
    path = Path(text).expanduser()
    return path if path.is_absolute() else (base / path)


def task_dirs(section: Section, base: Path) -> tuple[Path, ...]:
    """The section's `tasks`: folders, each listed once."""
    texts = section.string_list("tasks", required=True)
    if len(texts) > MAX_TASKS:
        raise section.fail("tasks", f"at most {MAX_TASKS} tasks, got {len(texts)}")
    out: list[Path] = []
    for i, text in enumerate(texts):
        path = resolve(base, text).resolve()
        if path in out:
            raise SectionError(("tasks", i), f"{text!r} is already tasks[{out.index(path)}]")
        out.append(path)
    return tuple(out)


def task_name_problem(name: str) -> str | None:
    """None when `name` can name result files, else the problem."""
    if TASK_NAME.match(name):
        return None
    return (f"task name {name!r}: use 1-80 letters, digits, '_', '-' or '.', "
            "starting with a letter or digit")


def task_names_problem(names: list[str]) -> None:
    """SectionError naming the first task whose name cannot name files or is taken."""
    for i, name in enumerate(names):
        problem = task_name_problem(name)
        if problem is not None:
            raise SectionError(("tasks", i), problem)
        if names.index(name) != i:
            raise SectionError(("tasks", i),
                               f"task name {name!r} is also the name of tasks[{names.index(name)}]")


def read_json(path: Path, error: type[Exception]) -> Any:
    """A result file's JSON, read with size and nesting caps; `error` naming the file."""
    try:
        with open(path, "rb") as f:
            return safejson.loads(f.read(MAX_RESULT_BYTES + 1), max_bytes=MAX_RESULT_BYTES)
    except (OSError, ValueError) as exc:
        raise error(f"{path}: cannot read as JSON: {exc}") from None


def check_name(path: Path, want: str, error: type[Exception]) -> None:
    """A result must sit in the file its content names: a copied or renamed file does not count."""
    if path.name != want:
        raise error(f"{path}: the file name does not match its result ({want})")


def write_bytes(path: Path, data: bytes) -> None:
    """Atomically: a reader never sees half a file."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def write_json(path: Path, value: dict[str, Any]) -> None:
    write_bytes(path, (json.dumps(value, indent=2, ensure_ascii=False) + "\n").encode())
