"""Bad golf data gets an error naming the file and field."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cogolf.games.golf.holes import DEFAULT_DECK, DEFAULT_REFERENCES, GolfDataError, load_holes


def _copy(tmp_path: Path) -> tuple[Path, Path]:
    deck, refs = tmp_path / "deck", tmp_path / "refs"
    shutil.copytree(DEFAULT_DECK, deck)
    shutil.copytree(DEFAULT_REFERENCES, refs)
    return deck, refs


def test_wrongly_typed_expected_value_is_named(tmp_path: Path) -> None:
    deck, refs = _copy(tmp_path)
    path = refs / "sum-digits.json"
    doc = json.loads(path.read_text())
    doc["private"][2]["expect"] = True
    path.write_text(json.dumps(doc))
    where = r"sum-digits.json: private\[2\]\.expect: expected an integer"
    with pytest.raises(GolfDataError, match=where):
        load_holes(deck, refs)


def test_unknown_type_and_version_mismatch(tmp_path: Path) -> None:
    deck, refs = _copy(tmp_path)
    path = deck / "palindrome.json"
    doc = json.loads(path.read_text())
    doc["returns"] = "boolean"
    path.write_text(json.dumps(doc))
    with pytest.raises(GolfDataError, match=r"palindrome\.json: returns: unknown type"):
        load_holes(deck, refs)
    deck, refs = _copy(tmp_path / "again")
    (refs / "course.json").write_text('{"name": "golf", "version": "golf-0"}')
    with pytest.raises(GolfDataError, match="does not match"):
        load_holes(deck, refs)
