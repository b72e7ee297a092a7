"""The scorer's side of the results channel, and the wheel check, on crafted input."""

from __future__ import annotations

import json
import random
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cogolf.evaluation.build import WheelError, check_wheel
from cogolf.evaluation.channel import junit_id, plant_canaries, read_records, with_plugin
from cogolf.evaluation.reports import Outcome

TOKEN = "t" * 32


def lines(*records: dict[str, object], token: str = TOKEN) -> bytes:
    return b"".join(json.dumps({**r, "token": token}).encode() + b"\n" for r in records)


def phases(nodeid: str, *outcomes: str) -> list[dict[str, object]]:
    return [
        {"id": nodeid, "when": w, "outcome": o}
        for w, o in zip(("setup", "call", "teardown"), outcomes, strict=False)
    ]


def test_junit_ids_match_pytest_junitxml() -> None:
    assert (
        junit_id("tests/test_roman.py::test_to_roman[1994-MCMXCIV]")
        == "tests.test_roman::test_to_roman[1994-MCMXCIV]"
    )
    assert (
        junit_id("tests/test_cached.py::NoneWrapperTest::test_decorator")
        == "tests.test_cached.NoneWrapperTest::test_decorator"
    )
    assert junit_id("a/b.py::t[x/y.py::z]") == "a.b::t[x/y.py::z]"


def test_a_test_passes_only_with_every_phase_reported() -> None:
    data = lines(
        {"event": "start"},
        *phases("t.py::full", "passed", "passed", "passed"),
        *phases("t.py::no_teardown", "passed", "passed"),
        *phases("t.py::setup_only", "passed"),
        *phases("t.py::failed", "passed", "failed", "passed"),
        *phases("t.py::broken_teardown", "passed", "passed", "failed"),
    )
    result = read_records(data, TOKEN, set())
    assert result.report.tests == {
        "t::full": Outcome.PASSED,
        "t::no_teardown": Outcome.NO_RESULT,
        "t::setup_only": Outcome.NO_RESULT,
        "t::failed": Outcome.FAILED,
        "t::broken_teardown": Outcome.ERROR,
    }
    assert result.started and not result.finished and not result.tampered


def test_a_later_pass_cannot_hide_a_failure() -> None:
    data = lines(
        *phases("t.py::x", "passed", "failed", "passed"),
        *phases("t.py::x", "passed", "passed", "passed"),
        {"event": "finish"},
    )
    assert read_records(data, TOKEN, set()).report.tests["t::x"] is Outcome.FAILED


def test_forged_lines_canaries_and_tripwires_are_tampering() -> None:
    forged = lines(*phases("t.py::x", "passed", "passed", "passed"), token="guess")
    assert read_records(forged, TOKEN, set()).tampered
    assert read_records(b"not json\n", TOKEN, set()).tampered
    canary = lines(*phases("t.py::test_canary_1", "passed", "passed", "passed"))
    result = read_records(canary, TOKEN, {"t.py::test_canary_1"})
    assert result.tampered == ["a canary test that must fail was reported as passed"]
    assert "t::test_canary_1" not in result.report.tests  # never scored
    tripped = read_records(lines({"tripwire": "scanned the heap"}), TOKEN, set())
    assert tripped.tampered == ["tripwire: scanned the heap"]


def test_a_cut_last_line_is_no_result_not_tampering() -> None:
    data = lines(*phases("t.py::x", "passed", "passed")) + b'{"id": "t.py::x", "wh'
    result = read_records(data, TOKEN, set())
    assert not result.tampered and result.report.tests["t::x"] is Outcome.NO_RESULT


def test_canaries_are_planted_in_real_modules_and_fail(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_words.py").write_text(
        "def count_words(text):\n    return len(text.split())\n\n"
        "def test_count_words():\n    assert count_words('a b') == 2\n"
    )
    planted = plant_canaries(tests, tmp_path, rng=random.Random(7))
    assert len(planted) == 3 and all(p.startswith("tests/test_words.py::test_") for p in planted)
    namespace: dict[str, object] = {}
    exec((tests / "test_words.py").read_text(), namespace)
    for nodeid in planted:
        with pytest.raises(AssertionError):
            namespace[nodeid.rpartition("::")[2]]()  # type: ignore[operator]


def test_the_plugin_goes_right_after_dash_m_pytest() -> None:
    assert with_plugin(["py", "-P", "-m", "pytest", "-q"], "m") == [
        "py",
        "-P",
        "-m",
        "pytest",
        "-p",
        "m",
        "-q",
    ]
    assert with_plugin(["go", "test", "-json"], "m") is None


def _wheel(tmp_path: Path, members: dict[str, str]) -> Path:
    path = tmp_path / "lib-1.0-py3-none-any.whl"
    with zipfile.ZipFile(path, "w") as zf:
        zf.writestr("lib-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: true\n")
        for name, text in members.items():
            zf.writestr(name, text)
    return path


@pytest.mark.parametrize(
    ("member", "message"),
    [
        ("evil.pth", ".pth"),
        ("lib/hook.pth", ".pth"),
        ("sitecustomize.py", "outside the library"),
        ("lib-1.0.data/purelib/x.py", "outside the library"),
        ("../escape.py", "unsafe path"),
    ],
)
def test_wheel_check_refuses_what_a_library_wheel_must_not_hold(
    tmp_path: Path, member: str, message: str
) -> None:
    with pytest.raises(WheelError, match=message):
        check_wheel(_wheel(tmp_path, {"lib/__init__.py": "", member: "x"}), {"lib"})


def test_wheel_check_refuses_a_pytest_plugin_and_accepts_a_plain_library(tmp_path: Path) -> None:
    plugin = _wheel(
        tmp_path,
        {"lib/__init__.py": "", "lib-1.0.dist-info/entry_points.txt": "[pytest11]\nx = lib\n"},
    )
    with pytest.raises(WheelError, match="pytest11"):
        check_wheel(plugin, {"lib"})
    plugin.unlink()
    assert check_wheel(_wheel(tmp_path, {"lib/__init__.py": "", "lib/a.py": ""}), {"lib"}) is True


def test_canaries_join_test_classes_in_their_style(tmp_path: Path) -> None:
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_cache.py").write_text(
        "import unittest\n\n\nclass CacheMixin:\n    def test_base(self):\n        pass\n\n\n"
        "class LRUCacheTest(unittest.TestCase, CacheMixin):\n"
        "    def test_size(self):\n        self.assertEqual(len([1, 2]), 2)\n"
        "class TestPlain:\n    def test_one(self):\n        assert 1 + 1 == 2"
    )
    planted = plant_canaries(tests, tmp_path, count=6, rng=random.Random(3))
    classes = {p.split("::")[1] for p in planted}
    assert classes <= {"LRUCacheTest", "TestPlain"} and classes, planted
    text = (tests / "test_cache.py").read_text()
    assert "self.assertEqual(" in text.split("class TestPlain")[0].split("def test_size")[1]
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "pytest",
            "-q",
            "-p",
            "no:cacheprovider",
            "--rootdir",
            str(tmp_path),
            "-rA",
            str(tests),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=60,
        check=False,
    )
    for nodeid in planted:
        assert f"FAILED {nodeid}" in done.stdout, done.stdout
    assert "PASSED tests/test_cache.py::LRUCacheTest::test_size" in done.stdout
    assert "PASSED tests/test_cache.py::TestPlain::test_one" in done.stdout
