"""Exact tests of the official id files' bounds, messages and mapping, and of the rate."""

from __future__ import annotations

import bz2
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.commit0.official import (
    MAX_ID_CHARS,
    MAX_ID_FILE_BYTES,
    MAX_ID_TEXT_BYTES,
    MAX_IDS,
    IdFileError,
    OfficialRate,
    official_rate,
    parse_ids,
    read_id_file,
    to_official,
)


def refusal(path: Path) -> str:
    with pytest.raises(IdFileError) as caught:
        read_id_file(path)
    return str(caught.value)


def test_a_file_of_exactly_the_cap_is_read_whole_and_one_byte_more_is_refused(
        tmp_path: Path) -> None:
    head = "t.py::first\n#"
    last = "\nt.py::last"
    text = head + "x" * (MAX_ID_FILE_BYTES - len(head) - len(last)) + last
    exact = tmp_path / "exact.txt"
    exact.write_text(text)
    assert exact.stat().st_size == MAX_ID_FILE_BYTES
    assert read_id_file(exact) == ["t.py::first", "t.py::last"]  # the last byte too
    over = tmp_path / "over.txt"
    over.write_text(text + "x")
    assert refusal(over) == f"{over}: over 4194304 bytes"


def test_the_refusals_name_the_file_and_the_reason_exactly(tmp_path: Path) -> None:
    absent = tmp_path / "absent.bz2"
    assert refusal(absent) == f"{absent}: cannot read (No such file or directory)"
    corrupt = tmp_path / "corrupt.bz2"
    corrupt.write_bytes(b"BZh9" + b"\x00" * 64)
    assert refusal(corrupt) == f"{corrupt}: corrupt bz2 data (Invalid data stream)"
    truncated = tmp_path / "truncated.bz2"
    truncated.write_bytes(bz2.compress(b"t.py::a\n" * 1000)[:-20])
    assert refusal(truncated) == f"{truncated}: truncated bz2 data"
    bomb = tmp_path / "bomb.bz2"
    bomb.write_bytes(bz2.compress(b"#" * (MAX_ID_TEXT_BYTES + 1)))
    assert refusal(bomb) == f"{bomb}: decompresses to over 33554432 bytes"


def test_bz2_text_of_exactly_the_cap_is_accepted(tmp_path: Path) -> None:
    head = "t.py::a\n#"
    path = tmp_path / "ids.bz2"
    path.write_bytes(bz2.compress((head + "#" * (MAX_ID_TEXT_BYTES - len(head))).encode()))
    assert read_id_file(path) == ["t.py::a"]


# Reading /dev/zero and a bomb of 256 MiB under an address-space limit of 96 MiB above the
# interpreter's own: only reads bounded by the caps finish (a copy of the tree under test
# imports its own package, mutated or not).
BOUNDED = """
import resource, sys
from pathlib import Path
from cogolf.games.commit0.official import IdFileError, read_id_file
size = int(open("/proc/self/statm").read().split()[0]) * resource.getpagesize()
resource.setrlimit(resource.RLIMIT_AS, (size + 96 * 2**20, size + 96 * 2**20))
for name in sys.argv[1:]:
    try:
        read_id_file(Path(name))
    except IdFileError as exc:
        print(str(exc).replace(name, "FILE"))
"""


def test_reading_stops_at_the_caps_however_large_the_file(tmp_path: Path) -> None:
    bomb = tmp_path / "bomb.bz2"
    bomb.write_bytes(bz2.compress(b"a" * 256 * 2**20))
    small = tmp_path / "small.bz2"
    small.write_bytes(bz2.compress(b"t.py::a\n"))
    assert read_id_file(small) == ["t.py::a"]  # the same reader, in this process
    done = subprocess.run([sys.executable, "-c", BOUNDED, "/dev/zero", str(bomb)],
                          capture_output=True, text=True, timeout=120, check=False)
    assert done.returncode == 0, done.stderr[-2000:]
    assert done.stdout.splitlines() == ["FILE: over 4194304 bytes",
                                        "FILE: decompresses to over 33554432 bytes"]


def test_comments_and_blank_lines_are_skipped_not_ends(tmp_path: Path) -> None:
    assert parse_ids("t.py::a\n\n# a comment\n  \nt.py::b\n#\nt.py::c", "ids") == [
        "t.py::a", "t.py::b", "t.py::c"]


def test_an_id_of_exactly_the_longest_length_is_accepted() -> None:
    node = "t.py::" + "x" * (MAX_ID_CHARS - 6)
    assert parse_ids(node, "ids") == [node]
    with pytest.raises(IdFileError) as caught:
        parse_ids("t.py::ok\n" + node + "x", "ids")
    assert str(caught.value) == "ids:2: id longer than 2000 characters"


def test_exactly_the_most_ids_are_accepted_and_one_more_is_refused() -> None:
    text = "\n".join(f"t.py::t{i}" for i in range(MAX_IDS))
    ids = parse_ids(text, "ids")
    assert len(ids) == MAX_IDS and ids[-1] == f"t.py::t{MAX_IDS - 1}"
    with pytest.raises(IdFileError) as caught:
        parse_ids(text + "\nt.py::more", "ids")
    assert str(caught.value) == "ids: more than 200000 ids"


@pytest.mark.parametrize("node", [
    "tests/a.py::test_split[a::]",  # `::` inside the parameters: the path is the first part
    "tests/a.py::test[x/..::y]",
    "tests/X.py::test",
    "tests/X.yml::case",
    "tests/a.py::Class::test",
])
def test_ids_split_at_their_first_separator_are_accepted(node: str) -> None:
    assert parse_ids(node, "ids") == [node]


@pytest.mark.parametrize("node", ["tests/.hidden::test", "tests/test_a.::test",
                                  "tests/a.py/::test"])
def test_a_path_that_names_no_file_is_refused(node: str) -> None:
    with pytest.raises(IdFileError) as caught:
        parse_ids(node, "ids")
    assert str(caught.value) == f"ids:1: {node!r} is not a pytest id (`path/to/test_x.py::test`)"


def test_long_ids_are_quoted_to_their_first_120_characters() -> None:
    node = "tests/" + "a" * 200
    with pytest.raises(IdFileError) as caught:
        parse_ids(node, "ids")
    assert str(caught.value) == (f"ids:1: {node[:120]!r} is not a pytest id "
                                 "(`path/to/test_x.py::test`)")
    path = "/" + "b" * 200 + ".py"
    with pytest.raises(IdFileError) as caught:
        parse_ids(path + "::test", "ids")
    assert str(caught.value) == f"ids:1: {path[:120]!r} must be a relative path without '..'"


def test_to_official_with_a_top_level_file_and_without_a_test_name() -> None:
    files = ["test.py", "tests/test_x.py"]
    assert to_official("test.Class::test_a", files) == "test.py::Class::test_a"
    assert to_official("tests.test_x", files) == "tests/test_x.py"
    assert to_official("tests.test_x.Class", files) == "tests/test_x.py::Class"
    assert to_official("pkg.mod", files) == "pkg/mod.py"


def test_the_rate_document_is_exact() -> None:
    rate = official_rate(["t.py::a", "t.py::b", "t.py::c"],
                         {"t.py::a": "passed", "t.py::b": "xfailed"})
    assert rate == OfficialRate(3, 1, 0, 1, 1, 1 / 3, ("t.py::b", "t.py::c"))
    assert rate.to_json() == {"listed": 3, "passed": 1, "xpassed": 0, "xfailed": 1,
                              "missing": 1, "rate": 0.333333, "failed": ["t.py::b", "t.py::c"]}


def test_every_xpass_is_counted_and_only_xpasses() -> None:
    listed = ["t.py::a", "t.py::b", "t.py::c", "t.py::d"]
    rate = official_rate(listed, {"t.py::a": "xpassed", "t.py::b": "xpassed",
                                  "t.py::c": "passed", "t.py::d": "failed"})
    assert (rate.passed, rate.xpassed, rate.failed) == (3, 2, ("t.py::d",))
