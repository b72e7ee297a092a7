"""The night file: one TOML document describing a league night.

Parsing is strict because a night can run for hours: a typo found after the
first hundred matches is expensive. Every problem becomes a `NightError` whose
message names the file, the line and the field (`entrant[2].policy`, counted
from 0 like every other path in the project). Checks that need the deck or
user code (does this policy load?) live in `cogolf.league.checks`.
"""

from __future__ import annotations

import os
import re
import shlex
import tomllib
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.bots.policy import builtin_names
from cogolf.deck import DEFAULT_DECK, DEFAULT_REFERENCES
from cogolf.engine import rules
from cogolf.league.tomllines import Path as KeyPath
from cogolf.league.tomllines import key_lines, line_of

NAME_PATTERN = re.compile(r"^[A-Za-z0-9][A-Za-z0-9_.-]{0,47}$")
MIN_ENTRANTS = 2
MAX_ENTRANTS = 64
MAX_PARALLEL = 256
MAX_SEED = 2**63 - 1
MAX_HOLE_DEADLINE = 3600.0
MAX_MATCH_DEADLINE = 7 * 24 * 3600.0
MAX_HOLES = 99
EXECUTORS = ("local", "ray")

TOP_LEVEL_FIELDS = (
    "name",
    "seed",
    "holes",
    "hole_deadline",
    "retry_deadline",
    "match_deadline",
    "deck",
    "references",
    "executor",
    "parallel",
    "address",
    "entrant",
)
ENTRANT_FIELDS = ("name", "policy", "command")


class NightError(ValueError):
    """A night file that cannot be used; the message names the file, line and field."""


@dataclass(frozen=True)
class Entrant:
    name: str
    policy: str | None  # a policy reference, `file.py` paths made absolute
    command: tuple[str, ...] | None  # argv of a bot process; `{url}` is the seat URL
    line: int  # where its [[entrant]] table starts


@dataclass(frozen=True)
class Night:
    path: Path
    name: str
    seed: int
    holes: int
    hole_deadline: float
    retry_deadline: float
    match_deadline: float
    deck: Path
    references: Path
    entrants: tuple[Entrant, ...]
    executor: str
    parallel: int
    address: str | None
    lines: dict[KeyPath, int]  # where each field was written, for later errors

    def error(self, path: KeyPath, problem: str) -> NightError:
        return _error(self.path, self.lines, path, problem)


def _field_name(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def _error(file: Path, lines: dict[KeyPath, int], path: KeyPath, problem: str) -> NightError:
    line = line_of(lines, path)
    where = f"{file}:{line}" if line is not None else str(file)
    return NightError(f"{where}: {_field_name(path)}: {problem}" if path else f"{where}: {problem}")


def default_parallel() -> int:
    return os.cpu_count() or 1


class _Reader:
    """Typed access to one table of the document, raising errors that point at the field."""

    def __init__(self, file: Path, lines: dict[KeyPath, int], table: dict[str, Any], at: KeyPath):
        self.file, self.lines, self.table, self.at = file, lines, table, at

    def fail(self, key: str | None, problem: str) -> NightError:
        path = (*self.at, key) if key is not None else self.at
        return _error(self.file, self.lines, path, problem)

    def check_known(self, known: tuple[str, ...]) -> None:
        for key in self.table:
            if key not in known:
                raise self.fail(key, f"unknown field (expected one of: {', '.join(known)})")

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        if key not in self.table:
            if required:
                raise self.fail(None, f"missing required field {key!r}")
            return default
        value = self.table[key]
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {_kind(value)}")
        return value

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        if key not in self.table:
            return default
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {_kind(value)}")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high}, got {value}")
        return value

    def number(self, key: str, default: float, high: float) -> float:
        if key not in self.table:
            return default
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number of seconds, got {_kind(value)}")
        if not 0 < value <= high:
            raise self.fail(key, f"must be more than 0 and at most {high:g}, got {value}")
        return float(value)


def _kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return f"{type(value).__name__} {value!r}"


def _resolve(base: Path, text: str) -> Path:
    path = Path(text).expanduser()
    return path if path.is_absolute() else (base / path)


def _policy_ref(reader: _Reader, base: Path, ref: str) -> str:
    """Check the shape of a policy reference and anchor `file.py` paths at the night file."""
    if ref in builtin_names():
        return ref
    target, sep, attr = ref.rpartition(":")
    if not sep or not target or not attr.isidentifier():
        raise reader.fail(
            "policy",
            f"{ref!r} is not a policy: expected one of {', '.join(builtin_names())}, "
            "'path/to/file.py:name' or 'module:name'",
        )
    if target.endswith(".py"):
        path = _resolve(base, target)
        if not path.is_file():
            raise reader.fail("policy", f"no file {target} (looked for {path})")
        return f"{path.resolve()}:{attr}"
    if not all(part.isidentifier() for part in target.split(".")):
        raise reader.fail("policy", f"{target!r} is not a module name")
    return ref


def _command(reader: _Reader, value: Any) -> tuple[str, ...]:
    if isinstance(value, str):
        try:
            argv = shlex.split(value)
        except ValueError as exc:
            raise reader.fail("command", f"cannot split into arguments: {exc}") from None
    elif isinstance(value, list) and all(isinstance(v, str) for v in value):
        argv = list(value)
    else:
        raise reader.fail("command", f"must be a string or an array of strings, got {_kind(value)}")
    if not argv or not argv[0]:
        raise reader.fail("command", "is empty")
    return tuple(argv)


def _entrant(file: Path, lines: dict[KeyPath, int], base: Path, idx: int, table: Any) -> Entrant:
    at: KeyPath = ("entrant", idx)
    if not isinstance(table, dict):
        raise _error(file, lines, at, "must be a table ([[entrant]])")
    r = _Reader(file, lines, table, at)
    r.check_known(ENTRANT_FIELDS)
    name = r.string("name", required=True)
    assert name is not None
    if not NAME_PATTERN.match(name):
        raise r.fail(
            "name",
            f"{name!r}: use 1-48 letters, digits, '_', '-' or '.', starting with a letter or digit",
        )
    has_policy, has_command = "policy" in table, "command" in table
    if has_policy == has_command:
        raise r.fail(None, "give exactly one of 'policy' or 'command'")
    policy = command = None
    if has_policy:
        ref = r.string("policy")
        assert ref is not None
        policy = _policy_ref(r, base, ref)
    else:
        command = _command(r, table["command"])
    return Entrant(name=name, policy=policy, command=command, line=lines.get(at, 0))


def parse_night(path: Path, text: str | None = None) -> Night:
    """Read and validate a night file. `text` overrides reading `path` (for tests)."""
    path = Path(path)
    if text is None:
        try:
            text = path.read_text(encoding="utf-8")
        except UnicodeDecodeError as exc:
            raise NightError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None
        except OSError as exc:
            raise NightError(f"{path}: cannot read ({exc.strerror})") from None
    try:
        doc = tomllib.loads(text)
    except tomllib.TOMLDecodeError as exc:
        raise NightError(f"{path}: not valid TOML: {exc}") from None
    lines = key_lines(text)
    base = path.parent
    r = _Reader(path, lines, doc, ())
    r.check_known(TOP_LEVEL_FIELDS)
    name = r.string("name", required=True)
    assert name is not None
    if not NAME_PATTERN.match(name):
        raise r.fail(
            "name",
            f"{name!r}: use 1-48 letters, digits, '_', '-' or '.', starting with a letter or digit",
        )
    if "seed" not in doc:
        raise r.fail(None, "missing required field 'seed'")
    seed = r.integer("seed", 0, 0, MAX_SEED)
    holes = r.integer("holes", rules.DEFAULT_HOLES, 1, MAX_HOLES)
    hole_deadline = r.number("hole_deadline", rules.HOLE_DEADLINE_SECONDS, MAX_HOLE_DEADLINE)
    retry_deadline = r.number("retry_deadline", rules.RETRY_DEADLINE_SECONDS, MAX_HOLE_DEADLINE)
    match_deadline = r.number("match_deadline", 1800.0, MAX_MATCH_DEADLINE)
    deck_text = r.string("deck")
    refs_text = r.string("references")
    deck = _resolve(base, deck_text) if deck_text is not None else DEFAULT_DECK
    references = _resolve(base, refs_text) if refs_text is not None else DEFAULT_REFERENCES
    if deck_text is not None and refs_text is None:
        raise r.fail("deck", "a custom deck needs 'references' (the hidden half of the pack) too")
    for key, where in (("deck", deck), ("references", references)):
        if not where.is_dir():
            raise r.fail(key, f"no directory {where}")

    executor = r.string("executor", "local")
    assert executor is not None
    if executor not in EXECUTORS:
        raise r.fail("executor", f"{executor!r}: expected one of {', '.join(EXECUTORS)}")
    parallel = r.integer("parallel", default_parallel(), 1, MAX_PARALLEL)
    address = r.string("address")
    if address is not None and executor != "ray":
        raise r.fail("address", 'only used with executor = "ray"')

    raw = doc.get("entrant")
    if raw is None:
        raise r.fail(None, f"no entrants: add at least {MIN_ENTRANTS} [[entrant]] tables")
    if not isinstance(raw, list):
        raise r.fail("entrant", "must be an array of tables ([[entrant]])")
    if not MIN_ENTRANTS <= len(raw) <= MAX_ENTRANTS:
        raise r.fail(
            "entrant", f"a night needs {MIN_ENTRANTS} to {MAX_ENTRANTS} entrants, got {len(raw)}"
        )
    entrants: list[Entrant] = []
    seen: dict[str, int] = {}
    for idx, table in enumerate(raw):
        e = _entrant(path, lines, base, idx, table)
        if e.name in seen:
            raise _error(
                path,
                lines,
                ("entrant", idx, "name"),
                f"{e.name!r} is already the name of entrant[{seen[e.name]}]",
            )
        seen[e.name] = idx
        entrants.append(e)
    return Night(
        path=path,
        name=name,
        seed=seed,
        holes=holes,
        hole_deadline=hole_deadline,
        retry_deadline=retry_deadline,
        match_deadline=match_deadline,
        deck=deck,
        references=references,
        entrants=tuple(entrants),
        executor=executor,
        parallel=parallel,
        address=address,
        lines=lines,
    )
