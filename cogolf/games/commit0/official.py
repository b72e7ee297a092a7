"""The benchmark's own test ids and its pass rate, beside ours.

The benchmark lists, per library, the pytest node ids it scores
(`tests/test_x.py::Class::test_y[param]`, one per line, the file compressed
with bz2 as `<library>.bz2`; a plain text file is accepted too), items that
plugins collect from other files included (`tests/test_mypy.yml::case`). Its rate is
passed / listed ids, reading only the call phase of each test as
pytest-json-report gives it (its `evaluate.py`): an xpassed test is `passed`
there and counts, an xfailed one is `skipped` and does not (an xfail raised from
library code is no pass), and an id without a call result (missing, not
collected, setup error) counts as failed. Our ids are pytest's JUnit form
(`tests.test_x.Class::test_y[param]`); both directions of the mapping live here.
"""

from __future__ import annotations

import bz2
import re
from dataclasses import dataclass
from pathlib import Path, PurePosixPath
from typing import Any

from cogolf.evaluation.channel import junit_id

MAX_ID_FILE_BYTES = 4 * 1024 * 1024  # compressed, as read from disk
MAX_ID_TEXT_BYTES = 32 * 1024 * 1024  # once decompressed (a bz2 bomb stops here)
MAX_IDS = 200_000
MAX_ID_CHARS = 2000
OFFICIAL_PASSING = ("passed", "xpassed")
MAX_FAILED_LISTED = 500  # ids named in a result; the counts stay exact


class IdFileError(ValueError):
    """The id file cannot be used; the message names the file and, where it can, the line."""


def read_id_file(path: Path) -> list[str]:
    """The ids of an official id file (bz2 or plain text), in order, without duplicates."""
    try:
        with path.open("rb") as fh:
            raw = fh.read(MAX_ID_FILE_BYTES + 1)
    except OSError as exc:
        raise IdFileError(f"{path}: cannot read ({exc.strerror or exc})") from exc
    if len(raw) > MAX_ID_FILE_BYTES:
        raise IdFileError(f"{path}: over {MAX_ID_FILE_BYTES} bytes")
    if raw.startswith(b"BZh"):
        raw = _bunzip(path, raw)
    elif path.suffix == ".bz2":
        raise IdFileError(f"{path}: named .bz2 but not bz2-compressed")
    try:
        text = raw.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise IdFileError(f"{path}: not UTF-8 text (byte {exc.start})") from exc
    return parse_ids(text, str(path))


def _bunzip(path: Path, raw: bytes) -> bytes:
    decompressor = bz2.BZ2Decompressor()
    try:
        out = decompressor.decompress(raw, max_length=MAX_ID_TEXT_BYTES + 1)
    except (OSError, ValueError, EOFError) as exc:
        raise IdFileError(f"{path}: corrupt bz2 data ({exc})") from exc
    if len(out) > MAX_ID_TEXT_BYTES:
        raise IdFileError(f"{path}: decompresses to over {MAX_ID_TEXT_BYTES} bytes")
    if not decompressor.eof:
        raise IdFileError(f"{path}: truncated bz2 data")
    return out


def parse_ids(text: str, source: str) -> list[str]:
    ids: dict[str, None] = {}
    for number, line in enumerate(text.splitlines(), 1):
        node = line.strip()
        if not node or node.startswith("#"):
            continue
        where = f"{source}:{number}"
        if len(node) > MAX_ID_CHARS:
            raise IdFileError(f"{where}: id longer than {MAX_ID_CHARS} characters")
        if any(ord(c) < 32 for c in node):
            raise IdFileError(f"{where}: control character in id")
        check_node_id(node, where)
        ids[node] = None
        if len(ids) > MAX_IDS:
            raise IdFileError(f"{source}: more than {MAX_IDS} ids")
    if not ids:
        raise IdFileError(f"{source}: no test ids (one `path.py::test` per line)")
    return list(ids)


def check_node_id(node: str, where: str) -> None:
    """A pytest node id: a relative file path, `::`, the item's name. The file need not
    be Python: plugins collect items from other files (`tests/test_mypy.yml::case`, a
    doctest file `tests.md::tests.md`), and the benchmark lists them as they are."""
    path, sep, rest = node.partition("::")
    name = PurePosixPath(path).name
    if not sep or not rest or "." not in name.strip(".") or path.endswith("/"):
        raise IdFileError(f"{where}: {node[:120]!r} is not a pytest id (`path/to/test_x.py::test`)")
    pure = PurePosixPath(path)
    if pure.is_absolute() or ".." in pure.parts or "\\" in path:
        raise IdFileError(f"{where}: {path[:120]!r} must be a relative path without '..'")


def to_ours(node: str) -> str:
    """Official node id -> our JUnit-style id."""
    return junit_id(node)


def to_official(test_id: str, test_files: list[str]) -> str:
    """Our id -> the official node id, using the known test files (posix, relative)."""
    module, sep, rest = test_id.partition("::")
    by_module = {re.sub(r"\.py$", "", f).replace("/", "."): f for f in test_files}
    # the module part may end with class names: try the longest file prefix first
    parts = module.split(".")
    for cut in range(len(parts), 0, -1):
        file = by_module.get(".".join(parts[:cut]))
        if file is not None:
            names = [*parts[cut:], rest] if sep else parts[cut:]
            return "::".join([file, *names])
    return "/".join(parts) + ".py" + (f"::{rest}" if sep else "")


@dataclass(frozen=True)
class OfficialRate:
    listed: int
    passed: int  # call phase passed, xpassed included
    xpassed: int
    xfailed: int  # not passed
    missing: int  # listed but without a call result
    rate: float
    failed: tuple[str, ...] = ()  # the listed ids not passed, in list order

    def to_json(self) -> dict[str, Any]:
        return {"listed": self.listed, "passed": self.passed, "xpassed": self.xpassed,
                "xfailed": self.xfailed, "missing": self.missing, "rate": round(self.rate, 6),
                "failed": list(self.failed[:MAX_FAILED_LISTED])}


def official_rate(listed: list[str], calls: dict[str, str]) -> OfficialRate:
    """The benchmark's arithmetic: `calls` maps a node id to its call-phase outcome."""
    passed = xpassed = xfailed = missing = 0
    failed = []
    for node in listed:
        outcome = calls.get(node)
        missing += outcome is None
        xfailed += outcome == "xfailed"
        if outcome in OFFICIAL_PASSING:
            passed += 1
            xpassed += outcome == "xpassed"
        else:
            failed.append(node)
    rate = passed / len(listed) if listed else 0.0
    return OfficialRate(len(listed), passed, xpassed, xfailed, missing, rate, tuple(failed))
