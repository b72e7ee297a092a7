"""The benchmark's id files, the mapping between its ids and ours, and its rate."""

from __future__ import annotations

import bz2
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.commit0.official import (
    MAX_ID_TEXT_BYTES,
    IdFileError,
    official_rate,
    read_id_file,
    to_official,
    to_ours,
)

IDS = """tests/test_middlewares.py::test_caching
tests/test_queries.py::TestQuery::test_eq[1-2]
tests/sub/test_x.py::test_param[a.b::c]

tests/test_middlewares.py::test_caching
"""
FILES = ["tests/test_middlewares.py", "tests/test_queries.py", "tests/sub/test_x.py"]


def test_bz2_and_plain_files_read_the_same(tmp_path: Path) -> None:
    (tmp_path / "tinydb.bz2").write_bytes(bz2.compress(IDS.encode()))
    (tmp_path / "tinydb.txt").write_text(IDS)
    expected = ["tests/test_middlewares.py::test_caching",
                "tests/test_queries.py::TestQuery::test_eq[1-2]",
                "tests/sub/test_x.py::test_param[a.b::c]"]  # blank line and duplicate dropped
    assert read_id_file(tmp_path / "tinydb.bz2") == expected
    assert read_id_file(tmp_path / "tinydb.txt") == expected


def test_ids_map_both_ways() -> None:
    pairs = {
        "tests/test_middlewares.py::test_caching": "tests.test_middlewares::test_caching",
        "tests/test_queries.py::TestQuery::test_eq[1-2]":
            "tests.test_queries.TestQuery::test_eq[1-2]",
        "tests/sub/test_x.py::test_param[a.b::c]": "tests.sub.test_x::test_param[a.b::c]",
        "test.py::test_detect": "test::test_detect",
        "voluptuous/tests/tests.py::test_required": "voluptuous.tests.tests::test_required",
    }
    files = [*FILES, "test.py", "voluptuous/tests/tests.py"]
    for official, ours in pairs.items():
        assert to_ours(official) == ours
        assert to_official(ours, files) == official
    # a file not known at prepare: the dotted path becomes a path
    assert to_official("pkg.test_y::test_z", files) == "pkg/test_y.py::test_z"


def test_official_rate_arithmetic() -> None:
    listed = ["t.py::a", "t.py::b", "t.py::c", "t.py::d", "t.py::e", "t.py::f", "t.py::g"]
    calls = {"t.py::a": "passed", "t.py::b": "xfailed", "t.py::c": "failed",
             "t.py::d": "skipped", "t.py::e": "xpassed", "t.py::other": "passed"}
    rate = official_rate(listed, calls)  # f, g: no call phase (missing, setup error)
    # the benchmark's reading: an xpass is a pass, an xfail is not
    assert (rate.listed, rate.passed, rate.xpassed, rate.xfailed, rate.missing) == (7, 2, 1, 1, 2)
    assert rate.rate == pytest.approx(2 / 7)
    assert rate.failed == ("t.py::b", "t.py::c", "t.py::d", "t.py::f", "t.py::g")
    assert rate.to_json()["failed"] == list(rate.failed)
    assert official_rate([], calls).rate == 0.0


def test_official_rate_names_at_most_500_failed_ids_and_counts_them_all() -> None:
    listed = [f"t.py::t{i}" for i in range(501)]
    rate = official_rate(listed, {})
    assert rate.missing == 501 and len(rate.failed) == 501
    assert len(rate.to_json()["failed"]) == 500 and rate.to_json()["failed"][-1] == "t.py::t499"
    assert len(official_rate(listed[:500], {}).to_json()["failed"]) == 500


def test_the_benchmarks_items_of_other_files_are_accepted_as_they_are(tmp_path: Path) -> None:
    """Lines of the benchmark's own files (attrs, pytest, voluptuous): plugin items."""
    ids = ["tests/test_mypy.yml::attr_s_with_type_argument[val=a = attr.ib(type=int)]",
           "testing/freeze/tests/test_doctest.txt::test_doctest.txt",
           "voluptuous/tests/tests.md::tests.md", "tests/test_a.py::test_b"]
    path = tmp_path / "ids.bz2"
    path.write_bytes(bz2.compress("\n".join(ids).encode()))
    assert read_id_file(path) == ids
    assert to_ours(ids[2]) == "voluptuous.tests.tests.md::tests.md"
    rate = official_rate(ids, {ids[0]: "passed", ids[2]: "passed"})
    assert (rate.passed, rate.missing) == (2, 2)


@pytest.mark.parametrize(
    ("content", "message"),
    [
        (b"", "no test ids"),
        (b"\n\n# only a comment\n", "no test ids"),
        (b"tests/test_a.py\n", "is not a pytest id"),
        (b"tests/test_a::test\n", "is not a pytest id"),
        (b"tests/::test\n", "is not a pytest id"),
        (b"tests/test_a.py::\n", "is not a pytest id"),
        (b"/etc/passwd.py::test\n", "must be a relative path"),
        (b"tests/../../x.py::test\n", "must be a relative path"),
        (b"tests\\x.py::test\n", "must be a relative path"),
        (b"tests/a.py::test\x00x\n", "control character"),
        (b"tests/a.py::" + b"t" * 3000 + b"\n", "longer than"),
        (b"\xff\xfe tests/a.py::t\n", "not UTF-8"),
    ],
)
def test_hostile_id_files_are_refused_with_the_line(tmp_path: Path, content: bytes,
                                                    message: str) -> None:
    path = tmp_path / "lib.txt"
    path.write_bytes(content)
    with pytest.raises(IdFileError, match=message):
        read_id_file(path)


def test_hostile_bz2_files(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.bz2"
    bomb.write_bytes(bz2.compress(b"a" * (MAX_ID_TEXT_BYTES + 10)))
    assert bomb.stat().st_size < 10_000
    with pytest.raises(IdFileError, match="decompresses to over"):
        read_id_file(bomb)
    truncated = tmp_path / "truncated.bz2"
    truncated.write_bytes(bz2.compress(IDS.encode())[:-20])
    with pytest.raises(IdFileError, match=r"truncated|corrupt"):
        read_id_file(truncated)
    fake = tmp_path / "fake.bz2"
    fake.write_text(IDS)
    with pytest.raises(IdFileError, match="not bz2-compressed"):
        read_id_file(fake)
    with pytest.raises(IdFileError, match="cannot read"):
        read_id_file(tmp_path / "absent.bz2")
    with pytest.raises(IdFileError, match=r"second.txt:2: "):
        (tmp_path / "second.txt").write_text("t.py::ok\nbad line\n")
        read_id_file(tmp_path / "second.txt")


def test_cli_refuses_a_bad_id_file_before_doing_anything(tmp_path: Path) -> None:
    bad = tmp_path / "ids.bz2"
    bad.write_bytes(bz2.compress(b"../escape.py::test\n"))
    out = tmp_path / "task"
    done = subprocess.run(
        [sys.executable, "-m", "cogolf", "commit0", "prepare", "no-such-lib==1.0", "--out",
         str(out), "--official-ids", str(bad)],
        capture_output=True, text=True, timeout=60, check=False,
    )
    assert done.returncode == 2
    assert f"error: {bad}:1: '../escape.py' must be a relative path" in done.stderr
    assert "Traceback" not in done.stderr
    assert not out.exists()
