"""Solo games in the standings: order independence with every game, the combined table's
ranks and ties, and result files that do not belong to the night."""

from __future__ import annotations

import random
import re
import shutil
import tempfile
from pathlib import Path

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogolf.game import GameTable
from cogolf.league.combined import combined_table
from cogolf.league.publish import standings_for_dir
from cogolf.league.records import read_night_dir
from cogolf.league.results import read_results
from cogolf.league.standings import compute, to_json
from cogolf.league.table import render, render_combined

from .solo_synth import SoloResult, write_manifest, write_solo
from .synth import SynthMatch, write_match

NIGHT = "n"
NAMES = ["alpha", "beta", "gamma", "delta"]
COURSES = ["python", "racket"]
TASKS = ["textkit", "cachetools"]
PROJECTS = ["csv_importer"]
ATTEMPTS = 3


@st.composite
def solo_nights(draw: st.DrawFn) -> tuple[list[SynthMatch], list[SoloResult]]:
    names = NAMES[: draw(st.integers(2, 4))]
    pairs = [(a, b) for a in names for b in names if a != b]
    chosen = draw(st.lists(st.sampled_from(pairs), min_size=1, max_size=len(pairs), unique=True))
    matches = [
        SynthMatch(f"{NIGHT}-{a}-vs-{b}", (a, b),
                   tuple(draw(st.lists(st.tuples(*[st.integers(0, 3)] * 4), min_size=1,
                                       max_size=2))))
        for a, b in chosen
    ]
    results: list[SoloResult] = []
    present = st.sampled_from([True] * 12 + [False])  # mostly present: some entrants complete
    for name in names:
        for course in COURSES:
            if draw(present):
                # Few distinct scores, so equal keys (shared ranks) are common.
                results.append(SoloResult("golf", name, course, draw(st.sampled_from(
                    [31.0, 250.5, 18000.0]))))
        for task in TASKS:
            if draw(present):
                results.append(SoloResult("commit0", name, task, draw(st.integers(0, 10))))
        for task in PROJECTS:
            for n in range(1, ATTEMPTS + 1):
                if draw(present):
                    results.append(SoloResult("project", name, task,
                                              draw(st.sampled_from([0.0, 0.5, 1.0])), n))
    return matches, results


def _write(folder: Path, matches: list[SynthMatch], results: list[SoloResult],
           rng: random.Random | None = None) -> None:
    write_manifest(folder, NIGHT, NAMES, courses=COURSES, commit0=TASKS, project=PROJECTS,
                   attempts=ATTEMPTS)
    matches, results = matches[:], results[:]
    if rng is not None:
        rng.shuffle(matches)
        rng.shuffle(results)
    for i, match in enumerate(matches):
        name = f"{rng.getrandbits(40):x}-{i}.ndjson" if rng else f"{match.match_id}.ndjson"
        write_match(folder / name, match)
    for result in results:
        write_solo(folder, NIGHT, result)


@settings(max_examples=20, deadline=None,
          suppress_health_check=[HealthCheck.function_scoped_fixture, HealthCheck.too_slow])
@given(night=solo_nights(), seed=st.integers(0, 2**32))
def test_every_table_is_byte_identical_in_any_file_order(
    night: tuple[list[SynthMatch], list[SoloResult]], seed: int
) -> None:
    matches, results = night
    rng = random.Random(seed)
    with tempfile.TemporaryDirectory() as tmp:
        one, two = Path(tmp) / NIGHT, Path(tmp) / "other" / NIGHT
        _write(one, matches, results)
        _write(two, matches, results, rng)  # other creation order and replay file names
        first = standings_for_dir(one)
        second = standings_for_dir(two)
        assert to_json(first) == to_json(second)
        assert render(first) == render(second)
        # The pure function too, fed its records in another order.
        records, solo = read_night_dir(one), read_results(one, NIGHT)
        records.played.reverse()
        for lst in solo.results.values():
            rng.shuffle(lst)
        assert to_json(compute(records, solo=solo)) == to_json(first)
    _check_combined(first)


def _check_combined(doc: dict) -> None:
    combined = doc["combined"]
    games = combined["games"]
    assert games == ["cogolf", "golf", "commit0", "project"]
    listed = [r["entrant"] for r in combined["table"]] + [
        r["entrant"] for r in combined["incomplete"]]
    assert len(listed) == len(set(listed))
    for row in combined["table"]:
        assert row["mean_rank"] == round(sum(row["ranks"].values()) / len(games), 3)
    means = [r["mean_rank"] for r in combined["table"]]
    assert means == sorted(means)
    for prev, row in zip(combined["table"], combined["table"][1:], strict=False):
        assert (row["rank"] == prev["rank"]) == (row["mean_rank"] == prev["mean_rank"])
    for row in combined["incomplete"]:
        assert row["missing"] and set(row["missing"]) | set(row["has"]) == set(games)


def test_equal_mean_ranks_share_a_rank_and_incomplete_entrants_move_no_one() -> None:
    keys = {
        "cogolf": {"a": (1.0,), "b": (2.0,), "c": (3.0,), "d": (0.0,)},
        "golf": {"a": (200.0,), "b": (100.0,), "c": (300.0,)},  # d has no golf result
    }
    doc = combined_table({g: GameTable({}, k) for g, k in keys.items()}, ["a", "b", "c", "d"])
    assert [(r["rank"], r["entrant"], r["mean_rank"], r["ranks"]) for r in doc["table"]] == [
        (1, "a", 1.5, {"cogolf": 1, "golf": 2}),
        (1, "b", 1.5, {"cogolf": 2, "golf": 1}),
        (3, "c", 3.0, {"cogolf": 3, "golf": 3}),
    ]
    assert doc["incomplete"] == [{"entrant": "d", "missing": ["golf"], "has": ["cogolf"]}]
    # Beside them, each game's own table's rank: d (incomplete) is first in Cogolf's.
    assert [r["table_ranks"] for r in doc["table"]] == [
        {"cogolf": 2, "golf": 2}, {"cogolf": 3, "golf": 1}, {"cogolf": 4, "golf": 3}
    ]
    text = "\n".join(render_combined(doc))
    assert re.search(r"^\s*1\s+a\s+1\.500\s+2 \(1\)\s+2$", text, re.M), text
    assert re.search(r"^\s*3\s+c\s+3\.000\s+4 \(3\)\s+3$", text, re.M), text


def test_equal_game_keys_share_the_game_rank() -> None:
    keys = {"cogolf": {"a": (1.0,), "b": (1.0,), "c": (3.0,)},
            "commit0": {"a": (-0.5,), "b": (-0.5,), "c": (-0.5,)}}
    doc = combined_table({g: GameTable({}, k) for g, k in keys.items()}, ["a", "b", "c"])
    assert [(r["entrant"], r["ranks"], r["rank"]) for r in doc["table"]] == [
        ("a", {"cogolf": 1, "commit0": 1}, 1),
        ("b", {"cogolf": 1, "commit0": 1}, 1),
        ("c", {"cogolf": 3, "commit0": 1}, 3),
    ]


def test_files_that_do_not_belong_are_problems_not_rows(tmp_path: Path) -> None:
    d = tmp_path / NIGHT
    write_manifest(d, NIGHT, ["alpha", "beta"], courses=["python"], commit0=["textkit"],
                   project=["csv_importer"], attempts=2)
    write_match(d / "m.ndjson", SynthMatch(f"{NIGHT}-alpha-vs-beta", ("alpha", "beta"),
                                           ((1, 0, 0, 0),)))
    good = write_solo(d, NIGHT, SoloResult("golf", "alpha", "python", 31.0))
    shutil.copy(good, d / "golf" / "copy.json")  # renamed: its name no longer matches
    write_solo(d, NIGHT, SoloResult("golf", "zed", "python", 10.0))  # not an entrant
    write_solo(d, NIGHT, SoloResult("golf", "beta", "rust", 10.0))  # not a course tonight
    write_solo(d, "other-night", SoloResult("golf", "beta", "python", 10.0))
    write_solo(d, NIGHT, SoloResult("commit0", "alpha", "textkit", 10))
    write_solo(d, NIGHT, SoloResult("project", "alpha", "csv_importer", 1.0, 1))
    write_solo(d, NIGHT, SoloResult("project", "alpha", "csv_importer", 1.0, 2))
    write_solo(d, NIGHT, SoloResult("project", "alpha", "csv_importer", 1.0, 3))  # beyond 2
    (d / "commit0" / "alpha.broken.json").write_text("{not json")
    doc = standings_for_dir(d)
    problems = "\n".join(doc["problems"])
    assert "golf/copy.json: the file name does not match" in problems
    assert "'zed' is not an entrant of the night" in problems
    assert "course 'rust' is not played this night" in problems
    assert "golf/beta.python.other-night.json: run_id: 'other-night' is not the night" in problems
    assert "project/alpha.csv_importer.3.json: attempt 3 is beyond the night's 2" in problems
    assert "commit0/alpha.broken.json: cannot read as JSON" in problems
    assert str(tmp_path) not in problems
    golf = doc["games"]["golf"]["per_course"]["python"]
    assert [(r["entrant"], r["score"]) for r in golf] == [("alpha", 31.0)]
    assert doc["games"]["project"]["table"][0]["per_task"] == {"csv_importer": 2.0}
    combined = doc["combined"]
    assert [r["entrant"] for r in combined["table"]] == ["alpha"]
    assert combined["incomplete"] == [
        {"entrant": "beta", "missing": ["golf", "commit0", "project"], "has": ["cogolf"]}]
