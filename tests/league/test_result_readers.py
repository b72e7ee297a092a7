"""Every reader of a night's folder survives any file: a hostile or malformed file is a
listed problem, never a crash, and never hides the good files beside it."""

from __future__ import annotations

import json
import subprocess
import sys
import tempfile
from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogolf.jsondepth import too_deep
from cogolf.league.proof import CACHE_NAME, ProofCache, night_key, sign_file, unsigned_reason
from cogolf.league.publish import standings_for_dir
from cogolf.league.records import read_night_dir
from cogolf.league.results import read_results
from cogolf.safejson import MAX_DEPTH, loads

from .solo_synth import SoloResult, write_solo
from .synth import SynthMatch, write_match

NIGHT = "fuzz"
DEEP = 100_000
GOOD = [
    SoloResult("golf", "alice", "python", 100.0),
    SoloResult("commit0", "alice", "textkit", 7),
    SoloResult("project", "alice", "csv_importer", 0.5, attempt=1),
]
# Files named as the readers expect, so the content is what is tested.
HOSTILE_NAMES = {
    "golf": "bob.python.fuzz.json",
    "commit0": "bob.textkit.json",
    "project": "bob.csv_importer.1.json",
    "void": "bob.textkit.json",
}

json_values = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(),
    lambda kids: (
        st.lists(kids, max_size=4) | st.dictionaries(st.text(max_size=5), kids, max_size=4)
    ),
    max_leaves=30,
)


def deep(kind: str) -> bytes:
    if kind == "array":
        return b"[" * DEEP + b"]" * DEEP
    if kind == "object":
        return b'{"a":' * DEEP + b"1" + b"}" * DEEP
    # a deep value inside an otherwise valid commit0 record
    return b'{"task":"textkit","entrant":"bob","extra":' + b"[" * DEEP + b"]" * DEEP + b"}"


hostile_bytes = st.one_of(
    st.binary(max_size=300),
    st.sampled_from([deep("array"), deep("object"), deep("field")]),
    json_values.map(lambda v: json.dumps(v).encode()),
    st.builds(
        lambda extra: json.dumps(
            {"game": "project", "entrant": "bob", "task": "csv_importer", "attempt": 1, **extra}
        ).encode(),
        st.dictionaries(
            st.sampled_from(["points", "status", "scale", "schema", "notes"]),
            json_values,
            max_size=4,
        ),
    ),
)


def _true_depth(value: Any) -> int:
    if isinstance(value, list):
        return 1 + max((_true_depth(v) for v in value), default=0)
    if isinstance(value, dict):
        return 1 + max((_true_depth(v) for v in value.values()), default=0)
    return 0


@given(value=json_values)
def test_the_depth_measure_is_the_depth_of_the_document(value: Any):
    data = json.dumps(value).encode()
    depth = _true_depth(value)
    assert not too_deep(data, depth)
    assert depth == 0 or too_deep(data, depth - 1)


@given(text=st.text(alphabet='[]{}"\\ab', max_size=40))
def test_brackets_inside_strings_do_not_count(text: str):
    data = json.dumps({"k": text}).encode()
    assert not too_deep(data, 1) and too_deep(data, 0)


def test_a_document_nested_beyond_the_cap_is_refused_with_its_depth():
    for kind in ("array", "object"):
        try:
            loads(deep(kind))
        except ValueError as exc:
            assert f"nested more than the {MAX_DEPTH} levels" in str(exc)
        else:
            raise AssertionError("a deep document was accepted")


def _good_folder(folder: Path) -> None:
    key = night_key(folder, create=True)
    assert key is not None
    for result in GOOD:
        sign_file(key, folder, write_solo(folder, NIGHT, result))


@settings(max_examples=60, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(game=st.sampled_from(sorted(HOSTILE_NAMES)), data=hostile_bytes, signed=st.booleans())
def test_solo_readers_never_crash_and_keep_the_good_files(game: str, data: bytes, signed: bool):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _good_folder(folder)
        where = folder / ("commit0/void" if game == "void" else game)
        where.mkdir(parents=True, exist_ok=True)
        path = where / HOSTILE_NAMES[game]
        path.write_bytes(data)
        key = night_key(folder)
        if signed:
            sign_file(key, folder, path)  # signed garbage is still garbage
        solo = read_results(folder, NIGHT, key=key, signed=True)
        assert (
            solo.of("golf")[0].model,
            solo.of("commit0")[0].entrant,
            solo.of("project")[0].entrant,
        ) == ("alice", "alice", "alice")
        every = (*solo.of("golf"), *solo.of("commit0"), *solo.of("project"))
        bob = [r for r in every if "bob" in repr(r)]
        assert len(bob) + len(solo.problems) + len(solo.void) >= 1
        for problem in solo.problems:
            assert str(folder) not in problem  # named relative to the folder


@settings(max_examples=40, deadline=None)
@given(lines=st.lists(hostile_bytes, min_size=1, max_size=3))
def test_replay_and_side_file_readers_never_crash(lines: list[bytes]):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        write_match(
            folder / "fuzz-a-vs-b.ndjson", SynthMatch("fuzz-a-vs-b", ("a", "b"), ((1, 0, 0, 0),))
        )
        (folder / "fuzz-x-vs-y.ndjson").write_bytes(b"\n".join(lines))
        (folder / "fuzz-x-vs-y.void.json").write_bytes(lines[0])
        (folder / "night.json").write_bytes(lines[-1])
        records = read_night_dir(folder)
        assert [p.match_id for p in records.played] == ["fuzz-a-vs-b"]
        assert records.problems


def test_league_standings_survives_deeply_nested_commit0_and_project_results(tmp_path: Path):
    folder = tmp_path / "fuzz"
    folder.mkdir()
    write_match(
        folder / "fuzz-a-vs-b.ndjson", SynthMatch("fuzz-a-vs-b", ("a", "b"), ((1, 0, 0, 0),))
    )
    _good_folder(folder)
    key = night_key(folder)
    for game, kind in (("commit0", "field"), ("project", "array"), ("golf", "object")):
        path = folder / game / HOSTILE_NAMES[game]
        path.write_bytes(deep(kind))
        sign_file(key, folder, path)
    # Trusting the files (no replay checks), as a folder built in memory is read:
    doc = standings_for_dir(folder)
    assert doc["games"]["cogolf"]["matches"]["played"] == 1
    # Through the command, which also re-proves the (synthetic, so unverifiable) replay:
    out = tmp_path / "s.json"
    run = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "standings", str(folder), "--out", str(out)],
        capture_output=True,
        text=True,
        timeout=300,
        check=False,
    )
    assert run.returncode == 0, run.stderr[-2000:]
    assert "Traceback" not in run.stderr
    problems = json.loads(out.read_text())["problems"]
    for game in ("commit0", "project", "golf"):
        assert any(
            p.startswith(f"{game}/{HOSTILE_NAMES[game]}") and "nested" in p for p in problems
        ), problems
    assert any(p.startswith("fuzz-a-vs-b.ndjson: does not verify") for p in problems)


def test_a_forged_commit0_pass_rate_is_not_counted(tmp_path: Path):
    folder = tmp_path / "fuzz"
    folder.mkdir()
    _good_folder(folder)  # alice passed 7 of 10, signed by the runner
    path = folder / "commit0" / "alice.textkit.json"
    data = json.loads(path.read_text())
    data.update(passed=10, pass_rate=1.0)
    path.write_text(json.dumps(data))
    solo = read_results(folder, NIGHT, key=night_key(folder), signed=True)
    assert solo.of("commit0") == []
    assert solo.problems == [
        "commit0/alice.textkit.json: the signature does not match: edited after the runner "
        "wrote it; not counted"
    ]
    # A result copied in without a signature is not counted either.
    bob = write_solo(folder, NIGHT, SoloResult("commit0", "bob", "textkit", 10))
    solo = read_results(folder, NIGHT, key=night_key(folder), signed=True)
    assert (
        f"commit0/{bob.name}: not signed by this night's runner (no signature); not counted"
        in solo.problems
    )


@settings(max_examples=60, deadline=None)
@given(
    cache=hostile_bytes | json_values.map(lambda v: json.dumps({"r.ndjson": v}).encode()),
    sig=st.binary(max_size=80) | st.text(max_size=80).map(str.encode),
)
def test_the_verdict_cache_and_signatures_survive_any_bytes(cache: bytes, sig: bytes):
    with tempfile.TemporaryDirectory() as tmp:
        folder = Path(tmp)
        _good_folder(folder)
        key = night_key(folder)
        assert key is not None
        (folder / CACHE_NAME).write_bytes(cache)
        loaded = ProofCache.load(key, folder)
        assert loaded.get("r.ndjson", "0" * 64, "v") is None  # nothing forged is believed
        golf = folder / "golf" / "alice.python.fuzz.json"
        Path(f"{golf}.sig").write_bytes(sig)
        assert unsigned_reason(key, folder, golf) is not None
