"""The scorer's side of the results channel, and the wheel check, on crafted input."""

from __future__ import annotations

import ast
import json
import random
import re
import subprocess
import sys
import zipfile
from pathlib import Path

import pytest

from cogolf.evaluation.build import WheelError, check_wheel, unpack_wheel
from cogolf.evaluation.channel import junit_id, plant_canaries, read_records, with_plugin
from cogolf.evaluation.reports import Outcome
from cogolf.evaluation.twins import tamper_reason

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


def test_forged_lines_and_canaries_are_tampering_a_tripwire_alone_a_note() -> None:
    forged = lines(*phases("t.py::x", "passed", "passed", "passed"), token="guess")
    assert read_records(forged, TOKEN, set()).tampered
    assert read_records(b"not json\n", TOKEN, set()).tampered
    canary = lines(*phases("t.py::test_canary_1", "passed", "passed", "passed"))
    result = read_records(canary, TOKEN, {"t.py::test_canary_1"})
    assert result.tampered == ["a canary test that must fail was reported as passed"]
    assert "t::test_canary_1" not in result.report.tests  # never scored
    # honest tools set tripwires off (Hypothesis's trace function): alone, a note
    tripped = read_records(lines({"tripwire": "installed a trace function"},
                                 *phases("t.py::x", "passed", "passed", "passed")),
                           TOKEN, set())
    assert not tripped.tampered and tripped.report.tests["t::x"] is Outcome.PASSED
    assert tripped.suspicions == ["tripwire: installed a trace function (not confirmed by "
                                  "the twins or canaries: not held against the run)"]
    # confirmed by a canary: the tripwire is one of the verdict's reasons
    both = read_records(lines({"tripwire": "scanned the heap"}) + canary, TOKEN,
                        {"t.py::test_canary_1"})
    assert both.tampered == ["a canary test that must fail was reported as passed",
                             "tripwire: scanned the heap"]
    assert not both.suspicions


def test_collection_messages_exit_status_time_limits_and_durations() -> None:
    data = lines(
        {"event": "start"},
        {"collect_error": "tests/test_a.py", "message": "ModuleNotFoundError: No module "
         "named 'psutil'" + "x" * 500},
        {"collected": ["t.py::slow", "t.py::fast"]},
        *({**r, "seconds": 40.0} for r in phases("t.py::slow", "passed", "failed", "passed")),
        {"event": "time_limit", "id": "t.py::slow"},
        *({**r, "seconds": 0.5} for r in phases("t.py::fast", "passed", "passed", "passed")),
        {"event": "finish", "exitstatus": 1},
    )
    result = read_records(data, TOKEN, set())
    assert result.collect_errors == ["tests/test_a.py"]
    message = result.collect_messages["tests/test_a.py"]
    assert message.startswith("ModuleNotFoundError: No module named 'psutil'")
    assert len(message) == 300  # capped
    assert result.exitstatus == 1 and result.time_limited == ["t.py::slow"]
    assert result.seconds == {"t.py::slow": 120.0, "t.py::fast": 1.5}
    assert result.report.tests["t::slow"] is Outcome.FAILED


def test_a_twin_passed_with_its_original_is_tampering_and_never_shown() -> None:
    twins = {"t.py::test_twin": "t.py::test_real", "t.py::C::test_b2": "t.py::C::test_b"}
    data = lines(
        {"event": "start"},
        {"collected": ["t.py::test_real[1]", "t.py::test_twin[1]", "t.py::C::test_b",
                       "t.py::C::test_b2"]},
        *phases("t.py::test_real[1]", "passed", "passed", "passed"),
        *phases("t.py::test_twin[1]", "passed", "passed", "passed"),
        *phases("t.py::C::test_b", "passed", "failed", "passed"),
        *phases("t.py::C::test_b2", "passed", "passed", "passed"),
        {"event": "finish"},
    )
    result = read_records(data, TOKEN, set(), twins)
    # the class twin passed alone: an honest wrong answer can do that, no verdict
    assert result.tampered == [tamper_reason(1, 2)]
    assert "test_twin" not in result.tampered[0] and "test_b2" not in result.tampered[0]
    assert result.report.tests == {"t::test_real[1]": Outcome.PASSED,
                                   "t.C::test_b": Outcome.FAILED}
    assert result.collected == ["t.py::test_real[1]", "t.py::C::test_b"]
    assert set(result.calls) == {"t.py::test_real[1]", "t.py::C::test_b"}
    assert result.twin_originals == {"t::test_twin[1]": "t::test_real[1]",
                                     "t.C::test_b2": "t.C::test_b"}
    # only twins whose original is a scored test count; a dry run counts none
    assert not read_records(data, TOKEN, set(), twins, {"t.C::test_b"}).tampered
    dry = read_records(data, TOKEN, set(), twins, frozenset())
    assert not dry.tampered and dry.twin_outcomes["t::test_twin[1]"] is Outcome.PASSED


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
    text = (tests / "test_words.py").read_text()
    namespace: dict[str, object] = {}
    exec(text, namespace)
    functions = {n.name: n for n in ast.parse(text).body if isinstance(n, ast.FunctionDef)}
    for nodeid in planted:
        name = nodeid.rpartition("::")[2]
        with pytest.raises(AssertionError):
            namespace[name]()  # type: ignore[operator]
        # not recognisable by shape: no number in the name, no two constants compared;
        # a name bound to an expected value of the module's checks against a near int
        assert not re.search(r"\d", name)
        first, *_, last = functions[name].body
        assert isinstance(first, ast.Assign) and isinstance(ast.literal_eval(first.value), int)
        assert isinstance(last, ast.Assert) and isinstance(last.test, ast.Compare)
        assert isinstance(last.test.left, ast.Name)
        assert last.test.left.id == first.targets[0].id  # type: ignore[attr-defined]
        assert isinstance(ast.literal_eval(last.test.comparators[0]), int)


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


def test_a_pure_wheels_scripts_are_accepted_and_never_installed(tmp_path: Path) -> None:
    members = {"lib/__init__.py": "", "lib-1.0.data/scripts/lib-tool": "#!python\n"}
    wheel = _wheel(tmp_path, members)
    assert check_wheel(wheel, {"lib"}) is True
    site = tmp_path / "site"
    unpack_wheel(wheel, site)
    assert (site / "lib" / "__init__.py").exists() and not (site / "lib-1.0.data").exists()
    wheel.unlink()
    for other in ("lib-1.0.data/scripts/", "lib-1.0.data/data/share/x", "lib-1.0.data/headers/h"):
        with pytest.raises(WheelError, match="outside the library"):
            check_wheel(_wheel(tmp_path, {"lib/__init__.py": "", other: "x"}), {"lib"})
        (tmp_path / "lib-1.0-py3-none-any.whl").unlink()
    compiled = tmp_path / "lib-1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(compiled, "w") as zf:
        zf.writestr("lib-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n")
        zf.writestr("lib/__init__.py", "")
        zf.writestr("lib-1.0.data/scripts/lib-tool", "#!python\n")
    with pytest.raises(WheelError, match="only a pure-Python wheel"):
        check_wheel(compiled, {"lib"})


def test_a_librarys_pytest_plugin_is_removed_and_a_plain_library_accepted(
    tmp_path: Path
) -> None:
    points = "[console_scripts]\nLib-Tool = lib:main\n\n[pytest11]\nx = lib.plugin\n"
    plugin = _wheel(tmp_path, {"lib/__init__.py": "", "lib-1.0.dist-info/entry_points.txt": points})
    assert check_wheel(plugin, {"lib"}) is True
    unpack_wheel(plugin, tmp_path / "site")
    kept = (tmp_path / "site" / "lib-1.0.dist-info" / "entry_points.txt").read_text()
    assert "pytest11" not in kept and "lib.plugin" not in kept and "Lib-Tool = lib:main" in kept
    plugin.unlink()
    compiled = tmp_path / "lib-1.0-cp311-cp311-linux_x86_64.whl"
    with zipfile.ZipFile(compiled, "w") as zf:
        zf.writestr("lib-1.0.dist-info/WHEEL", "Wheel-Version: 1.0\nRoot-Is-Purelib: false\n")
        zf.writestr("lib-1.0.dist-info/entry_points.txt", points)
    with pytest.raises(WheelError, match="pytest11"):
        check_wheel(compiled, {"lib"})
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
