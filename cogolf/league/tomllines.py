"""Line numbers for the keys of a TOML document.

`tomllib` reports syntax errors with a line, but once a document parses it keeps no
positions, so a night file that is valid TOML yet wrong (a missing policy, a bad
seed) could not be pointed at. This scanner reads the text again and records where
each table and key starts. It understands just enough TOML for that: table and
array-of-table headers, bare, quoted and dotted keys, and multi-line strings (whose
contents must not be mistaken for keys).
"""

from __future__ import annotations

import re

Path = tuple[str | int, ...]

_HEADER = re.compile(r"^\s*(\[\[?)\s*([^\]]+?)\s*(\]\]?)\s*(#.*)?$")
_SIMPLE_KEY = r"""[A-Za-z0-9_-]+|"[^"\n]*"|'[^'\n]*'"""
_KEY = re.compile(rf"^\s*((?:{_SIMPLE_KEY})(?:\s*\.\s*(?:{_SIMPLE_KEY}))*)\s*=")
_PART = re.compile(_SIMPLE_KEY)


def _parts(dotted: str) -> list[str]:
    return [p[1:-1] if p[0] in "\"'" else p for p in _PART.findall(dotted)]


def key_lines(text: str) -> dict[Path, int]:
    """Map each table and key to its 1-based line: ("seed",), ("entrant", 1, "policy"), ...

    Array-of-table entries are indexed from 0 in the order they appear."""
    lines: dict[Path, int] = {}
    counts: dict[tuple[str, ...], int] = {}
    table: Path = ()
    in_multiline: str | None = None
    for n, line in enumerate(text.splitlines(), start=1):
        if in_multiline is not None:
            if line.count(in_multiline) % 2 == 1:
                in_multiline = None
            continue
        header = _HEADER.match(line)
        if header and not _KEY.match(line):
            names = tuple(_parts(header.group(2)))
            if header.group(1) == "[[":
                idx = counts.get(names, 0)
                counts[names] = idx + 1
                lines.setdefault(names, n)  # the array itself starts at its first entry
                table = (*names, idx)
            else:
                table = names
            lines.setdefault(table, n)
            continue
        key = _KEY.match(line)
        if key:
            path = (*table, *_parts(key.group(1)))
            lines.setdefault(path, n)
            rest = line[key.end() :]
            for quote in ('"""', "'''"):
                if rest.count(quote) % 2 == 1:
                    in_multiline = quote
                    break
    return lines


def line_of(lines: dict[Path, int], path: Path) -> int | None:
    """The line of `path`, or of its nearest enclosing table when the key is absent."""
    while path:
        if path in lines:
            return lines[path]
        path = path[:-1]
    return None
