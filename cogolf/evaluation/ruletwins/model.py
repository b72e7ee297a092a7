"""What a rule finds in a test source: its tests, and each twin one of them can have."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Edit:
    """Replace `text[start:end]` of the source with `new`."""

    start: int
    end: int
    new: str


@dataclass(frozen=True)
class Unit:
    """One test (a PHPUnit method, a Go test function) as a twin copies it."""

    name: str
    owner: str  # its class (PHPUnit); "" where tests are not in classes (Go)
    start: int  # offset of its first line (leading comments included)
    end: int  # offset just past its last line (the closing brace and its line break)
    name_at: int  # offset of its name in its header
    variants: tuple[Edit, ...]  # each possible twin: one change to its first check


@dataclass(frozen=True)
class SourceFile:
    text: str
    units: tuple[Unit, ...]  # every test of the file, in order, twinnable or not
