"""Hypothesis mutates a real replay; every mutant verifies as the same content or fails in one line.

A mutant either verifies, and then it says exactly what the honest file says (only
wall-clock values may differ), or every reader refuses it with one line naming
the file and the line. Nothing else: no traceback, no other exception type.
"""

from __future__ import annotations

import contextlib
import json
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, event, given, settings
from hypothesis import strategies as st

from cogolf import messages as m
from cogolf.games.cogolf.hosted import journal_prefix
from cogolf.replay import ReplayError, read_replay
from cogolf.scorecard import render
from cogolf.verify import FREE_INPUTS, VerifyError
from tests.replay.helpers import DECK

json_leaf = st.one_of(
    st.none(),
    st.booleans(),
    st.integers(min_value=-(2**65), max_value=2**65),
    st.sampled_from([0, 1, 2, 3, 5, 7, 2**63, 2**64, -1]),
    st.floats(allow_nan=False, allow_infinity=False),
    st.text(max_size=6),
    st.sampled_from(["Ash", "Basil", "literalist", "pedant", "complete", "breach", "held"]),
)
json_value = st.recursive(
    json_leaf,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.text(max_size=4), inner, max_size=3)
    ),
    max_leaves=6,
)


def _paths(doc: Any, here: tuple = ()) -> list[tuple]:
    out = [here]
    if isinstance(doc, dict):
        for k, v in doc.items():
            out += _paths(v, (*here, k))
    elif isinstance(doc, list):
        for i, v in enumerate(doc):
            out += _paths(v, (*here, i))
    return out


def _set(doc: Any, path: tuple, value: Any) -> Any:
    if not path:
        return value
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    parent[path[-1]] = value
    return doc


def _get(doc: Any, path: tuple) -> Any:
    for step in path:
        doc = doc[step]
    return doc


def _nudged(value: Any, how: int) -> Any:
    if isinstance(value, bool):
        return not value
    if isinstance(value, int):
        return [value + 1, value - 1, 2**64][how]
    if isinstance(value, float):
        return [value + 0.5, -value - 1.0, float(int(value))][how]
    if isinstance(value, str):
        return [value + "x", value[:-1], value.upper() if value.upper() != value else "Ash"][how]
    return [0, "", False][how]


def _drop(doc: Any, path: tuple) -> Any:
    parent = doc
    for step in path[:-1]:
        parent = parent[step]
    del parent[path[-1]]
    return doc


def _compact(doc: Any) -> bytes:
    return json.dumps(doc, separators=(",", ":"), ensure_ascii=False).encode()


@st.composite
def mutants(draw: st.DrawFn, honest: list[bytes]) -> list[bytes]:
    lines = list(honest)
    for _ in range(draw(st.integers(1, 2))):
        n = len(lines)
        i = draw(st.integers(0, n - 1))
        op = draw(
            st.sampled_from(
                [
                    "delete",
                    "duplicate",
                    "swap",
                    "set",
                    "drop",
                    "add",
                    "bytes",
                    "cut",
                    "deep",
                    "wall",
                ]
                + ["nudge"] * 6
            )
        )
        if op == "delete" and n > 1:
            del lines[i]
        elif op == "duplicate":
            lines.insert(draw(st.integers(0, n)), lines[i])
        elif op == "swap":
            j = draw(st.integers(0, n - 1))
            lines[i], lines[j] = lines[j], lines[i]
        elif op in ("set", "drop", "add", "deep", "wall", "nudge"):
            try:
                doc = json.loads(lines[i])
            except (ValueError, RecursionError):  # an earlier mutation made it unreadable
                continue
            paths = _paths(doc)
            path = draw(st.sampled_from(paths))
            if op == "set":
                doc = _set(doc, path, draw(json_value))
            elif op == "nudge":  # the same type, another value: only re-derivation can tell
                leaves = [p for p in paths if p and not isinstance(_get(doc, p), dict | list)]
                if not leaves:
                    continue
                leaf = draw(st.sampled_from(leaves))
                doc = _set(doc, leaf, _nudged(_get(doc, leaf), draw(st.integers(0, 2))))
            elif op == "drop" and path:
                doc = _drop(doc, path)
            elif op == "add" and isinstance(doc, dict):
                doc[draw(st.sampled_from(["score_override", "extra", "kind", "hole", "slot"]))] = (
                    draw(json_value)
                )
            elif op == "deep":  # spliced as text: no encoder could write 3000 levels
                depth = draw(st.sampled_from([60, 99, 101, 500, 3000]))
                doc = _set(doc, path, "\u0000deep")
                deep = ("[" * depth + "]" * depth).encode()
                lines[i] = _compact(doc).replace(b'"\\u0000deep"', deep)
                continue
            elif op == "wall" and isinstance(doc, dict):
                key = next((k for k in doc if k in m.WALL_CLOCK_FIELDS), None)
                if key is not None:
                    doc[key] = draw(st.floats(min_value=0, max_value=2e9))
            lines[i] = _compact(doc)
        elif op == "bytes":
            line = bytearray(lines[i])
            pos = draw(st.integers(0, len(line)))
            line[pos:pos] = draw(st.binary(min_size=1, max_size=3))
            lines[i] = bytes(line)
        elif op == "cut":
            lines[i] = lines[i][: draw(st.integers(0, max(0, len(lines[i]) - 1)))]
    return lines


def _meaning(lines: list[bytes]) -> list[Any]:
    """What the lines say, wall-clock values and the free inputs aside (`verify.FREE_INPUTS`:
    values only the recording knows). A verified file nests at most 100 deep."""
    out = []
    for line in lines:
        doc = json.loads(line)
        free = FREE_INPUTS.get(doc["kind"], frozenset()) | {"match_id"}
        if doc["kind"] == "submission":  # the inputs themselves: what they re-derive is checked
            free |= {"impl", "note", "tests"}
        out.append({k: v for k, v in doc.items() if k not in m.WALL_CLOCK_FIELDS | free})
    return out


def _one_line(message: str, path: Path) -> None:
    assert "\n" not in message and message.startswith(f"{path}:"), message


@settings(
    max_examples=300,
    deadline=None,
    suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow],
)
@given(data=st.data())
def test_a_mutant_verifies_as_the_same_match_or_fails_in_one_line(data, honest, shared, tmp_path):
    original = honest.read_bytes().splitlines()
    lines = data.draw(mutants(original))
    path = tmp_path / "mutant.ndjson"
    path.write_bytes(b"".join(line + b"\n" for line in lines))
    try:
        report = shared.verify(path)
    except VerifyError as exc:
        _one_line(str(exc), path)
        event("malformed" if exc.malformed else "differs")
    else:
        event("verified")
        assert report.holes_resolved == 2
        after, before = _meaning(lines), _meaning(original)
        changed = [
            (i, {k for k in a.keys() | b.keys() if a.get(k) != b.get(k)})
            for i, (a, b) in enumerate(zip(after, before, strict=False))
            if a != b
        ]
        assert len(after) == len(before) and not changed, changed
    try:
        replay = read_replay(path)
    except ReplayError as exc:
        _one_line(str(exc), path)
    else:
        render(replay)
        with contextlib.suppress(ReplayError):
            journal_prefix(path, DECK)
