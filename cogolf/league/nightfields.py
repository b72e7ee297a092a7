"""Typed, line-precise access to the fields of a night file.

Shared by the Cogolf part of the night file (`night`) and its solo-game
sections (`sections`), so every error reads the same way: file, line, the
field's path (`entrant[2].policy`, counted from 0) and what is wrong.
"""

from __future__ import annotations

import difflib
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any, TypeVar

from cogolf.deadlines import deadline_problem
from cogolf.league.tomllines import Path as KeyPath
from cogolf.league.tomllines import line_of
from cogolf.nightfiles import resolve  # noqa: F401 (re-exported)

T = TypeVar("T")


class NightError(ValueError):
    """A night file that cannot be used; the message names the file, line and field
    (one line per problem when there are several)."""

    def __init__(self, message: str, line: int | None = None) -> None:
        super().__init__(message)
        self.line = line


class Problems:
    """Every problem found in a night file, so that one run reports all of them, in
    line order, instead of one per attempt. A check that fails records its problem
    and the parse goes on with a stand-in value; `raise_any` ends it."""

    def __init__(self, file: Path) -> None:
        self.file = file
        self.found: list[NightError] = []
        # Likely mistakes that do not stop a night (a bot may fail on them), in line order
        # when shown: e.g. a file its command names that a walled bot cannot read.
        self.warnings: list[NightError] = []

    @contextmanager
    def check(self) -> Iterator[None]:
        try:
            yield
        except Problem as exc:
            self.found += exc.each
        except NightError as exc:
            self.found.append(exc)

    def value(self, read: Callable[[], T], stand_in: T) -> T:
        """`read()`, or `stand_in` after recording why it failed."""
        with self.check():
            return read()
        return stand_in

    def add(self, problem: NightError) -> None:
        self.found.append(problem)

    def warn(self, problem: NightError) -> None:
        self.warnings.append(problem)

    def warning_lines(self) -> list[str]:
        ordered = sorted(self.warnings, key=lambda e: -1 if e.line is None else e.line)
        return [f"warning: {e}" for e in ordered]

    def raise_any(self) -> None:
        if len(self.found) == 1:
            raise self.found[0]
        if self.found:
            raise Problem(self.file, self.found)


class Problem(NightError):
    """Several problems of one file, each on its own line, in line order."""

    def __init__(self, file: Path, each: list[NightError]) -> None:
        self.each = sorted(each, key=lambda e: -1 if e.line is None else e.line)
        listed = "\n".join(f"  {e}" for e in self.each)
        super().__init__(f"{file}: {len(self.each)} problems\n{listed}", self.each[0].line)


def field_name(path: KeyPath) -> str:
    out = ""
    for part in path:
        out += f"[{part}]" if isinstance(part, int) else (f".{part}" if out else part)
    return out


def error(file: Path, lines: dict[KeyPath, int], path: KeyPath, problem: str) -> NightError:
    line = line_of(lines, path)
    where = f"{file}:{line}" if line is not None else str(file)
    message = f"{where}: {field_name(path)}: {problem}" if path else f"{where}: {problem}"
    return NightError(message, line)


class Reader:
    """Typed access to one table of the document, raising errors that point at the field."""

    def __init__(self, file: Path, lines: dict[KeyPath, int], table: dict[str, Any], at: KeyPath):
        self.file, self.lines, self.table, self.at = file, lines, table, at

    def fail(self, key: str | None, problem: str) -> NightError:
        path = (*self.at, key) if key is not None else self.at
        return error(self.file, self.lines, path, problem)

    def check_known(self, known: tuple[str, ...]) -> None:
        """Every unknown field of the table, each a problem of its own."""
        expected = ", ".join(known)
        found = [
            self.fail(key, f"unknown field{_guess(key, known)} (expected one of: {expected})")
            for key in self.table
            if key not in known
        ]
        if len(found) == 1:
            raise found[0]
        if found:
            raise Problem(self.file, found)

    def string(self, key: str, default: str | None = None, *, required: bool = False) -> str | None:
        if key not in self.table:
            if required:
                raise self.fail(None, f"missing required field {key!r}")
            return default
        value = self.table[key]
        if not isinstance(value, str):
            raise self.fail(key, f"must be a string, got {kind(value)}")
        return value

    def integer(self, key: str, default: int, low: int, high: int) -> int:
        if key not in self.table:
            return default
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, int):
            raise self.fail(key, f"must be an integer, got {kind(value)}")
        if not low <= value <= high:
            raise self.fail(key, f"must be between {low} and {high}, got {value}")
        return value

    def number(self, key: str, default: float, high: float) -> float:
        if key not in self.table:
            return default
        value = self.table[key]
        if isinstance(value, bool) or not isinstance(value, int | float):
            raise self.fail(key, f"must be a number of seconds, got {kind(value)}")
        if not 0 < value <= high:
            raise self.fail(key, f"must be more than 0 and at most {high:g}, got {value}")
        return float(value)

    def deadline(self, key: str, default: float, high: float) -> float:
        """A number of seconds within the bounds every match's deadlines keep."""
        value = self.number(key, default, high)
        if (problem := deadline_problem(value, high)) is not None:
            raise self.fail(key, f"{problem}, got {value}")
        return value

    def boolean(self, key: str, default: bool) -> bool:
        if key not in self.table:
            return default
        value = self.table[key]
        if not isinstance(value, bool):
            raise self.fail(key, f"must be true or false, got {kind(value)}")
        return value

    def string_list(self, key: str, *, required: bool = False) -> list[str]:
        """A non-empty array of non-empty strings; an element's error names its index."""
        if key not in self.table:
            if required:
                raise self.fail(None, f"missing required field {key!r}")
            return []
        value = self.table[key]
        if not isinstance(value, list):
            raise self.fail(key, f"must be an array of strings, got {kind(value)}")
        if not value:
            raise self.fail(key, "is empty")
        for i, item in enumerate(value):
            if not isinstance(item, str) or not item:
                raise error(self.file, self.lines, (*self.at, key, i),
                            f"must be a non-empty string, got {kind(item)}")
        return list(value)


def _guess(key: str, known: tuple[str, ...]) -> str:
    close = difflib.get_close_matches(key, known, 1, 0.8)
    return f" (did you mean {close[0]!r}?)" if close else ""


def kind(value: Any) -> str:
    if isinstance(value, bool):
        return "a boolean"
    if isinstance(value, dict):
        return "a table"
    if isinstance(value, list):
        return "an array"
    return f"{type(value).__name__} {value!r}"
