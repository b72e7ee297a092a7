"""Reading and writing journals, exactly, on hand-made records (no match, no sandbox).

Every refusal is checked for its line and its words, every bound at the last value
accepted and the first refused, and the writer on real files with real locks.
"""

from __future__ import annotations

import copy
from pathlib import Path
from typing import Any

import pytest

from cogolf import messages as m
from cogolf.jsondepth import MAX_JSON_DEPTH
from cogolf.replay import (
    MAX_HOLES,
    MAX_LINE_BYTES,
    JournalBusy,
    Replay,
    ReplayError,
    ReplayWriter,
    decode_record,
    encode_record,
    read_replay,
    without_wall_clock,
)


def header(holes: int = 2, **kw: Any) -> m.ReplayHeader:
    fields: dict[str, Any] = dict(
        game_version="1", protocol="p1", match_id="m-1", deck_name="deck",
        deck_version="v1", deck_digest="d1", seed=3, names=["a", "b"], aliases=["A", "B"],
        holes=[f"k{i}" for i in range(1, holes + 1)],
        config={"holes": holes, "seed": 3, "names": ["a", "b"]}, sandbox={"kind": "fork"},
        started_at=1.5,
    )
    fields.update(kw)
    return m.ReplayHeader(**fields)


def start(k: int) -> m.HoleStart:
    return m.HoleStart(hole=k, spec_key=f"k{k}", at=2.0)


def sub(k: int, slot: int) -> m.SubmissionRecord:
    return m.SubmissionRecord(hole=k, slot=slot, source="seat", attempts=1, impl="x",
                              tests=[], note="", at=3.0)


def verdict(k: int, slot: int = 0, target: int | None = None) -> m.TestVerdict:
    return m.TestVerdict(hole=k, slot=slot, target_slot=1 - slot if target is None else target,
                         idx=0, name="t", args=[1], expect=1, why="w", legal=True,
                         legal_reason="ok", outcome="held", observed="1")


def par(k: int, slot: int) -> m.ParResult:
    return m.ParResult(hole=k, slot=slot, par_fails=0, par_total=3)


def score(k: int, **kw: Any) -> m.HoleScore:
    fields: dict[str, Any] = dict(hole=k, spec_key=f"k{k}", score=[1, 0], cumulative=[k, 0],
                                  breaches=[0, 0], par_fails=[0, 0], illegal_tests=[0, 0])
    fields.update(kw)
    return m.HoleScore(**fields)


def hole(k: int, verdicts: int = 1) -> list[Any]:
    return [start(k), sub(k, 0), sub(k, 1), *[verdict(k) for _ in range(verdicts)],
            par(k, 0), par(k, 1), score(k)]


def end(played: int = 2) -> m.EpisodeEnd:
    return m.EpisodeEnd(reason="complete", holes_played=played)


def result(**kw: Any) -> m.MatchResult:
    fields: dict[str, Any] = dict(
        match_id="m-1", names=["a", "b"], aliases=["A", "B"], scores=[2, 0],
        hole_scores=[[1, 0], [1, 0]], breaches=[0, 0], breaches_taken=[0, 0],
        par_fails=[0, 0], tests_fired=[2, 0], illegal_tests=[0, 0], holes_played=2,
        fallbacks=[0, 0], fallback_causes=[{}, {}], reason="complete",
        wall_clock_seconds=9.0, seed=3, deck_version="v1", deck_digest="d1", winner=0,
        killer_test=m.KillerTest(hole=1, slot=0, idx=0, name="t", args=[1], expect=1,
                                 why="w", swing=1),
    )
    fields.update(kw)
    return m.MatchResult(**fields)


def whole() -> list[Any]:
    return [header(), *hole(1), *hole(2, verdicts=2), end(), result()]


def write(path: Path, records: list[Any], tail: bytes = b"") -> Path:
    path.write_bytes(b"".join(encode_record(r) + b"\n" for r in records) + tail)
    return path


def refusal(tmp_path: Path, records: list[Any], tail: bytes = b"") -> tuple[int | None, str]:
    path = write(tmp_path / "j.ndjson", records, tail)
    with pytest.raises(ReplayError) as info:
        read_replay(path)
    err = info.value
    assert str(err) == f"{path}:{err.line}: {err.problem}"
    return err.line, err.problem


def test_a_whole_journal_reads_back_record_by_record(tmp_path: Path) -> None:
    records = whole()
    path = write(tmp_path / "j.ndjson", records)
    replay = read_replay(path)
    assert replay == Replay(path=path, header=records[0], events=records[1:-1],
                            result=records[-1], torn_tail=False,
                            lines=[encode_record(r) for r in records])
    assert replay.complete is True


def test_a_journal_under_way_is_not_complete(tmp_path: Path) -> None:
    records = [header(), *hole(1), start(2)]
    replay = read_replay(write(tmp_path / "j.ndjson", records))
    assert (replay.result, replay.complete, replay.torn_tail) == (None, False, False)
    assert replay.events == records[1:]
    assert len(replay.lines) == len(records)


def test_a_torn_last_line_is_reported_not_raised(tmp_path: Path) -> None:
    records = [header(), *hole(1)]
    torn = encode_record(start(2))[:-5]
    replay = read_replay(write(tmp_path / "j.ndjson", records, torn))
    assert replay.torn_tail is True
    assert replay.events == records[1:]
    assert replay.lines == [encode_record(r) for r in records]


def test_a_last_line_without_its_newline_is_torn_even_when_it_decodes(tmp_path: Path) -> None:
    records = [header(), *hole(1)]
    replay = read_replay(write(tmp_path / "j.ndjson", records, encode_record(start(2))))
    assert replay.torn_tail is True
    assert replay.events == records[1:]
    assert len(replay.lines) == len(records)
    # the result too: a journal whose result line lacks its newline is not complete
    done = [header(), *hole(1), *hole(2), end()]
    replay = read_replay(write(tmp_path / "r.ndjson", done, encode_record(result())))
    assert (replay.torn_tail, replay.result, replay.complete) == (True, None, False)


def test_a_bad_line_before_the_last_is_refused_even_when_the_tail_is_torn(
    tmp_path: Path,
) -> None:
    lines = [encode_record(header()), b"{not json", encode_record(start(1))[:-3]]
    path = tmp_path / "j.ndjson"
    path.write_bytes(b"\n".join(lines))
    with pytest.raises(ReplayError) as info:
        read_replay(path)
    assert info.value.line == 2


def test_a_complete_bad_last_line_is_refused(tmp_path: Path) -> None:
    assert refusal(tmp_path, [header()], b"{not json\n") == (
        2, "JSON is malformed: object keys must be strings (byte 1)")


def test_a_torn_header_is_refused(tmp_path: Path) -> None:
    line, _ = refusal(tmp_path, [], encode_record(header())[:-4])
    assert line == 1


def test_empty_and_headless_journals(tmp_path: Path) -> None:
    assert refusal(tmp_path, []) == (1, "empty replay (no header)")
    assert refusal(tmp_path, [start(1)]) == (1, "the first line must be the header")
    assert refusal(tmp_path, [header(), header()]) == (2, "a second header")


def test_an_unreadable_journal(tmp_path: Path) -> None:
    with pytest.raises(ReplayError) as info:
        read_replay(tmp_path)
    assert str(info.value) == f"{tmp_path}: cannot read (Is a directory)"
    assert (info.value.line, info.value.problem) == (None, str(info.value))


@pytest.mark.parametrize(
    ("records", "line", "problem"),
    [
        ([*hole(1), sub(1, 0)], 9, "submission outside any hole (no hole_start before it)"),
        ([sub(1, 0)], 2, "submission outside any hole (no hole_start before it)"),
        ([start(2)], 2, "hole_start for hole 2; the next hole is 1"),
        ([*hole(1), start(1)], 9, "hole_start for hole 1; the next hole is 2"),
        ([start(1), start(2)], 3, "hole_start inside hole 1"),
        ([start(1), sub(1, 1)], 3, "submission of slot 1 out of order"),
        ([start(1), sub(1, 0), sub(1, 0)], 4, "submission of slot 0 out of order"),
        ([start(1), sub(1, 0), sub(1, 1), sub(1, 1)], 5, "submission of slot 1 out of order"),
        ([start(1), sub(1, 0), verdict(1)], 4, "test_verdict out of order"),
        ([start(1), verdict(1)], 3, "test_verdict out of order"),
        ([start(1), sub(1, 0), sub(1, 1), par(1, 0), verdict(1)], 6,
         "test_verdict out of order"),
        ([start(1), sub(1, 0), par(1, 0)], 4, "par_result of slot 0 out of order"),
        ([start(1), sub(1, 0), sub(1, 1), par(1, 1)], 5, "par_result of slot 1 out of order"),
        ([start(1), sub(1, 0), sub(1, 1), verdict(1), par(1, 1)], 6,
         "par_result of slot 1 out of order"),
        ([start(1), sub(1, 0), sub(1, 1), par(1, 0), par(1, 0)], 6,
         "par_result of slot 0 out of order"),
        ([start(1), sub(1, 0), sub(1, 1), par(1, 0), par(1, 1), par(1, 1)], 7,
         "par_result of slot 1 out of order"),
        ([start(1), sub(1, 0), sub(1, 1), par(1, 0), score(1)], 6,
         "hole_score before both par results"),
        ([start(1), sub(1, 0), sub(1, 1), score(1)], 5, "hole_score before both par results"),
        ([start(1), sub(2, 0)], 3, "submission for hole 2 inside hole 1"),
        ([start(1), sub(1, 0), end(0)], 4, "episode_end inside hole 1, which is not resolved"),
        ([start(1), sub(1, 0), sub(1, 1), par(1, 0), par(1, 1), end(0)], 7,
         "episode_end inside hole 1, which is not resolved"),
        ([result()], 2, "the result must follow episode_end"),
        ([start(1), result()], 3, "the result must follow episode_end"),
        ([end(0), start(1)], 3, "hole_start after episode_end (only the result may follow)"),
        ([end(0), end(0)], 3, "episode_end after episode_end (only the result may follow)"),
        ([*hole(1), *hole(2), end(), result(), end()], 18, "a record after the result"),
        ([*hole(1), *hole(2), end(), result(), result()], 18, "a record after the result"),
    ],
)
def test_the_grammar_refuses_each_record_out_of_place(
    tmp_path: Path, records: list[Any], line: int, problem: str
) -> None:
    assert refusal(tmp_path, [header(), *records]) == (line, problem)


@pytest.mark.parametrize(
    "records",
    [
        [end(0), result(holes_played=0)],  # no hole played
        [start(1), end(0)],  # a hole that never resolved, just before the end
        [*hole(1), end(1)],
        [*hole(1), start(2), end(1)],
        [*hole(1, verdicts=0), *hole(2, verdicts=3)],  # holes without and with verdicts
        [start(1), sub(1, 0), sub(1, 1)],  # stopped anywhere
        [start(1), sub(1, 0), sub(1, 1), verdict(1), par(1, 0)],
    ],
)
def test_the_grammar_takes_each_record_in_place(tmp_path: Path, records: list[Any]) -> None:
    replay = read_replay(write(tmp_path / "j.ndjson", [header(), *records]))
    assert [*replay.events, *([replay.result] if replay.result else [])] == records


@pytest.mark.parametrize(
    ("pair", "fields"),
    [
        (n, ("names", "aliases")) for n in ("names", "aliases")
    ],
)
def test_the_header_holds_one_entry_per_seat(tmp_path: Path, pair: str, fields: Any) -> None:
    for wrong in ([], ["a"], ["a", "b", "c"]):
        assert refusal(tmp_path, [header(**{pair: wrong})]) == (
            1, f"{pair} must hold one entry per seat (2)")


@pytest.mark.parametrize("pair", ["score", "cumulative", "breaches", "par_fails",
                                  "illegal_tests"])
def test_a_hole_score_holds_one_entry_per_seat(tmp_path: Path, pair: str) -> None:
    body = [start(1), sub(1, 0), sub(1, 1), par(1, 0), par(1, 1)]
    for wrong in ([0], [0, 0, 0]):
        assert refusal(tmp_path, [header(), *body, score(1, **{pair: wrong})]) == (
            7, f"{pair} must hold one entry per seat (2)")


@pytest.mark.parametrize(
    "pair",
    ["names", "aliases", "scores", "breaches", "breaches_taken", "par_fails", "tests_fired",
     "illegal_tests", "fallbacks", "fallback_causes"],
)
def test_a_result_holds_one_entry_per_seat(tmp_path: Path, pair: str) -> None:
    wrong: list[Any] = [{}] if pair == "fallback_causes" else ["a"] if pair in (
        "names", "aliases") else [0]
    records = [header(), *hole(1), *hole(2), end(), result(**{pair: wrong})]
    assert refusal(tmp_path, records) == (17, f"{pair} must hold one entry per seat (2)")


def test_the_header_s_own_checks(tmp_path: Path) -> None:
    bad_id = "x" * 120 + "!"
    assert refusal(tmp_path, [header(match_id=bad_id)]) == (
        1, f"match_id {bad_id[:100]!r} is not a match id")
    assert refusal(tmp_path, [header(match_id="")]) == (1, "match_id '' is not a match id")
    assert refusal(tmp_path, [header(0)]) == (1, f"holes must list 1 to {MAX_HOLES} spec keys")
    assert refusal(tmp_path, [header(MAX_HOLES + 1)]) == (
        1, f"holes must list 1 to {MAX_HOLES} spec keys")
    assert read_replay(write(tmp_path / "max.ndjson", [header(MAX_HOLES)])).header.holes == [
        f"k{i}" for i in range(1, MAX_HOLES + 1)]
    assert read_replay(write(tmp_path / "one.ndjson", [header(1)])).header.holes == ["k1"]
    agree = "config: holes and seed must agree with the header's draw and seed"
    for config in ({"holes": 3, "seed": 3, "names": ["a", "b"]},
                   {"holes": 2, "seed": 4, "names": ["a", "b"]},
                   {"seed": 3, "names": ["a", "b"]},
                   {"holes": 2, "names": ["a", "b"]}):
        assert refusal(tmp_path, [header(config=config)]) == (1, agree)
    names = "config: names must hold one entry per seat (2)"
    for config in ({"holes": 2, "seed": 3},
                   {"holes": 2, "seed": 3, "names": "ab"},
                   {"holes": 2, "seed": 3, "names": ["a"]},
                   {"holes": 2, "seed": 3, "names": ["a", "b", "c"]}):
        assert refusal(tmp_path, [header(config=config)]) == (1, names)


def test_holes_and_seats_in_range(tmp_path: Path) -> None:
    assert refusal(tmp_path, [header(), start(0)]) == (2, "hole 0 is outside 1..2")
    assert refusal(tmp_path, [header(), start(3)]) == (2, "hole 3 is outside 1..2")
    # the last hole is in range
    records = [header(), *hole(1), *hole(2)]
    assert len(read_replay(write(tmp_path / "ok.ndjson", records)).events) == 14
    assert refusal(tmp_path, [header(), start(1), sub(1, 2)]) == (3, "slot 2 is not 0 or 1")
    assert refusal(tmp_path, [header(), start(1), sub(1, -1)]) == (3, "slot -1 is not 0 or 1")
    body = [header(), start(1), sub(1, 0), sub(1, 1)]
    assert refusal(tmp_path, [*body, verdict(1, 2, -1)]) == (5, "slot 2 is not 0 or 1")
    assert refusal(tmp_path, [*body, verdict(1, 0, 2)]) == (5, "target_slot 2 is not 0 or 1")
    assert refusal(tmp_path, [*body, verdict(1, 0, 0)]) == (
        5, "target_slot must be the other seat")
    assert refusal(tmp_path, [*body, verdict(1, 1, 1)]) == (
        5, "target_slot must be the other seat")
    both = read_replay(write(tmp_path / "v.ndjson", [*body, verdict(1, 1), verdict(1, 0)]))
    assert [(v.slot, v.target_slot) for v in both.events[3:]] == [(1, 0), (0, 1)]


def test_the_result_s_own_checks(tmp_path: Path) -> None:
    before = [header(), *hole(1), *hole(2), end()]
    for winner in (None, 0, 1):
        got = read_replay(write(tmp_path / "w.ndjson", [*before, result(winner=winner)]))
        assert got.result is not None and got.result.winner == winner
    for winner in (2, -1):
        assert refusal(tmp_path, [*before, result(winner=winner)]) == (
            17, f"winner {winner} is not 0, 1 or null")
    killer = result().killer_test
    assert killer is not None
    for slot in (2, -1):
        bad = copy.copy(killer)
        bad.slot = slot
        assert refusal(tmp_path, [*before, result(killer_test=bad)]) == (
            17, f"killer_test.slot {slot} is not 0 or 1")
    one = copy.copy(killer)
    one.slot = 1
    assert read_replay(write(tmp_path / "k.ndjson", [*before, result(killer_test=one)])).result
    assert read_replay(write(tmp_path / "n.ndjson", [*before, result(killer_test=None)])).result
    for scores in ([[1, 0], [1]], [[1, 0, 0], [1, 0]], [[]]):
        assert refusal(tmp_path, [*before, result(hole_scores=scores)]) == (
            17, "hole_scores must hold one pair per hole")
    assert read_replay(write(tmp_path / "h.ndjson", [*before, result(hole_scores=[])])).result


def test_holes_played_in_range(tmp_path: Path) -> None:
    before = [header(), *hole(1), *hole(2)]
    assert refusal(tmp_path, [*before, end(3)]) == (16, "holes_played 3 is outside 0..2")
    assert refusal(tmp_path, [*before, end(-1)]) == (16, "holes_played -1 is outside 0..2")
    assert refusal(tmp_path, [*before, end(2), result(holes_played=3)]) == (
        17, "holes_played 3 is outside 0..2")
    assert refusal(tmp_path, [*before, end(2), result(holes_played=-1)]) == (
        17, "holes_played -1 is outside 0..2")
    for played in (0, 2):
        got = read_replay(write(tmp_path / f"{played}.ndjson",
                                [*before, end(played), result(holes_played=played)]))
        assert got.result is not None and got.result.holes_played == played


def test_decode_record_bounds_and_strictness() -> None:
    line = encode_record(start(1))
    assert decode_record(line) == start(1)
    # padded to the last length accepted, then one byte over
    padded = line + b" " * (MAX_LINE_BYTES - len(line))
    assert decode_record(padded) == start(1)
    with pytest.raises(ValueError) as info:
        decode_record(padded + b" ")
    assert str(info.value) == f"line of {MAX_LINE_BYTES + 1} bytes exceeds {MAX_LINE_BYTES}"
    deep = b'{"kind":"hole_start","hole":1,"spec_key":"k","at":1,"x":' + (
        b"[" * (MAX_JSON_DEPTH + 1) + b"]" * (MAX_JSON_DEPTH + 1) + b"}")
    with pytest.raises(ValueError) as info:
        decode_record(deep)
    assert str(info.value) == f"nesting deeper than {MAX_JSON_DEPTH}"
    with pytest.raises(ValueError) as info:
        decode_record(line[:-1] + b',"extra":1}')
    assert str(info.value) == "Object contains unknown field `extra`"
    with pytest.raises(ValueError) as info:
        decode_record(b'{"kind":"hole_start","hole":"1","spec_key":"k","at":1}')
    assert str(info.value) == "Expected `int`, got `str` - at `$.hole`"


def test_the_error_keeps_its_line_and_problem(tmp_path: Path) -> None:
    err = ReplayError.at(tmp_path / "f", 7, "why")
    assert (str(err), err.line, err.problem) == (f"{tmp_path / 'f'}:7: why", 7, "why")
    plain = ReplayError("whole message")
    assert (plain.line, plain.problem) == (None, "whole message")
    assert isinstance(JournalBusy("x"), ReplayError)


def test_the_writer_writes_canonical_flushed_lines(tmp_path: Path) -> None:
    path = tmp_path / "deep" / "er" / "j.ndjson"
    records = whole()
    with ReplayWriter(path) as writer:
        for i, rec in enumerate(records):
            writer.write(rec)
            # flushed as written: a reader sees every line so far
            assert path.read_bytes() == b"".join(
                encode_record(r) + b"\n" for r in records[: i + 1])
    assert read_replay(path).lines == [encode_record(r) for r in records]
    writer.close()  # closing again is harmless


def test_a_journal_is_never_written_over(tmp_path: Path) -> None:
    path = write(tmp_path / "j.ndjson", [header()])
    with pytest.raises(JournalBusy) as info:
        ReplayWriter(path)
    assert str(info.value) == (
        f"{path}: a journal of that name exists; a match never writes into another "
        "match's journal")
    assert path.read_bytes() == encode_record(header()) + b"\n"


def test_one_writer_at_a_time(tmp_path: Path) -> None:
    path = tmp_path / "j.ndjson"
    first = ReplayWriter(path)
    for append in (True, True):
        with pytest.raises(JournalBusy) as info:
            ReplayWriter(path, append=append)
        assert str(info.value) == f"{path}: another writer holds this journal"
    first.write(header())
    first.close()
    # the lock went with the first writer
    with ReplayWriter(path, append=True) as again:
        again.write(start(1))
    assert read_replay(path).events == [start(1)]


def test_appending_cuts_a_torn_tail_first(tmp_path: Path) -> None:
    records = [header(), *hole(1)]
    path = write(tmp_path / "j.ndjson", records, encode_record(start(2))[:-7])
    with ReplayWriter(path, append=True) as writer:
        writer.write(start(2))
    assert path.read_bytes() == b"".join(encode_record(r) + b"\n" for r in [*records, start(2)])
    # a whole file is left as it is, and so is an empty one
    with ReplayWriter(path, append=True) as writer:
        writer.write(sub(2, 0))
    assert read_replay(path).events[-2:] == [start(2), sub(2, 0)]
    empty = tmp_path / "empty.ndjson"
    empty.write_bytes(b"")
    with ReplayWriter(empty, append=True) as writer:
        writer.write(header())
    assert empty.read_bytes() == encode_record(header()) + b"\n"
    # a file that is one torn line is cut to nothing
    torn = tmp_path / "torn.ndjson"
    torn.write_bytes(b'{"kind":"hea')
    with ReplayWriter(torn, append=True) as writer:
        writer.write(header())
    assert torn.read_bytes() == encode_record(header()) + b"\n"
    # down to a single byte
    byte = tmp_path / "byte.ndjson"
    byte.write_bytes(b"{")
    with ReplayWriter(byte, append=True) as writer:
        writer.write(header())
    assert byte.read_bytes() == encode_record(header()) + b"\n"


def test_without_wall_clock_drops_only_the_clock_fields() -> None:
    assert without_wall_clock(start(1)) == {"kind": "hole_start", "hole": 1, "spec_key": "k1"}
    doc = without_wall_clock(
        {"at": 1, "keep": [{"started_at": 2, "x": [{"wall_clock_seconds": 3, "y": 4}]}, 5],
         "n": None})
    assert doc == {"keep": [{"x": [{"y": 4}]}, 5], "n": None}
    got = without_wall_clock(result())
    assert "wall_clock_seconds" not in got and got["scores"] == [2, 0]
    assert without_wall_clock(header())["sandbox"] == {"kind": "fork"}
    assert "started_at" not in without_wall_clock(header())
