"""The benchmark's own test ids and its pass rate, beside ours.

The benchmark lists, per library, the pytest node ids it scores
(`tests/test_x.py::Class::test_y[param]`, one per line, the file compressed
with bz2 as `<library>.bz2`; a plain text file is accepted too). Its rate is
(passed + xfailed) / listed ids, reading only the call phase of each test:
an id without a call result (missing, not collected, setup error) counts as
failed. Our ids are pytest's JUnit form (`tests.test_x.Class::test_y[param]`);
both directions of the mapping live here.
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
OFFICIAL_PASSING = ("passed", "xfailed")


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
    path, sep, rest = node.partition("::")
    if not sep or not rest or not path.endswith(".py"):
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
    passed: int  # passed + xfailed, call phase
    xfailed: int
    missing: int  # listed but without a call result
    rate: float

    def to_json(self) -> dict[str, Any]:
        return {"listed": self.listed, "passed": self.passed, "xfailed": self.xfailed,
                "missing": self.missing, "rate": round(self.rate, 6)}


def official_rate(listed: list[str], calls: dict[str, str]) -> OfficialRate:
    """The benchmark's arithmetic: `calls` maps a node id to its call-phase outcome."""
    passed = xfailed = missing = 0
    for node in listed:
        outcome = calls.get(node)
        if outcome is None:
            missing += 1
        elif outcome in OFFICIAL_PASSING:
            passed += 1
            xfailed += outcome == "xfailed"
    rate = passed / len(listed) if listed else 0.0
    return OfficialRate(len(listed), passed, xfailed, missing, rate)
