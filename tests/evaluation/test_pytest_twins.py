"""The pytest twin generator on a synthetic suite run by real pytest: every form it
changes, the values it picks, the names and places it gives, what it refuses."""

from __future__ import annotations

import ast
import random
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.evaluation.pytest_twins import (
    all_sites,
    default_sites,
    far_float,
    find_tests,
    junit_key,
    near_int,
    near_string_token,
    plant_twins,
    run_count,
    twin_name,
    twins_for,
)

LIB = '''
def double(x):
    return 2 * x


def name(x):
    return f"n-{x}"


def parse(text):
    if not text:
        raise ValueError("empty")
    return text.split(",")
'''
FORMS = '''import unittest

import pytest
from pytest import raises

from lib import double, name, parse


def test_int():
    assert double(2) == 4


def test_negative():
    assert double(-3) == -6


def test_float():
    assert double(0.25) == 0.5


def test_approx():
    assert double(0.1) == pytest.approx(0.2)


def test_string():
    assert name(3) == "n-3"


def test_escape():
    assert name("\\t") == "n-\\t"


def test_bytes():
    assert name(1).encode() == b"n-1"


def test_list_on_the_left():
    assert ["a", "b"] == parse("a,b")


def test_dict():
    assert {"k": double(1), "v": [1, 2]} == {"k": 2, "v": [1, 2]}


def test_none():
    assert {}.get("x") is None
    assert parse("a") is not None


def test_membership():
    assert "a" in parse("a,b")
    assert "c" not in parse("a,b")


def test_not_equal():
    assert double(2) != 5


def test_order():
    assert double(2) > 3


def test_truth():
    assert double(1)
    assert not double(0)
    assert double(1) == 2 and double(2) == 4


def test_raises():
    with pytest.raises(ValueError):
        parse("")
    with raises(ValueError, match="empty") as caught:
        parse("")
    assert caught.type is ValueError


@pytest.mark.parametrize(("n", "want"), [(1, 2), (2, 4), (5, 10)])
def test_parametrized(n, want):
    assert double(n) == want


def test_nested():
    for n in [1, 2]:
        assert double(n) == 2 * n


def test_interrupt_is_never_unguarded():
    with pytest.raises(KeyboardInterrupt):
        raise KeyboardInterrupt


class TestPlain:
    def test_method(self):
        assert double(5) == 10


class CaseTest(unittest.TestCase):
    def test_equal(self):
        self.assertEqual(double(3), 6)

    def test_swaps(self):
        self.assertTrue(double(1))
        self.assertIsNone(None)
        self.assertIn("a", parse("a,b"))

    def test_almost(self):
        self.assertAlmostEqual(double(0.1), 0.2)

    def test_raises(self):
        with self.assertRaises(ValueError):
            parse("")
'''


def suite(tmp_path: Path) -> tuple[Path, Path]:
    tmp_path.mkdir(parents=True, exist_ok=True)
    (tmp_path / "lib.py").write_text(LIB)
    tests = tmp_path / "tests"
    tests.mkdir()
    (tests / "test_forms.py").write_text(FORMS)
    return tmp_path, tests


def run_pytest(root: Path) -> dict[str, str]:
    """Outcome per node id (PASSED, FAILED, ...), from real pytest with its summary."""
    done = subprocess.run(
        [sys.executable, "-m", "pytest", "-q", "-rA", "-p", "no:cacheprovider", "-p",
         "no:randomly", "--rootdir", str(root), str(root / "tests")],
        capture_output=True, text=True, cwd=root, timeout=120, check=False,
        env={"PYTHONPATH": str(root), "PATH": "/usr/bin:/bin"},
    )
    outcomes = dict(
        (m.group(2), m.group(1))
        for m in re.finditer(r"^(PASSED|FAILED|ERROR|SKIPPED|XFAIL|XPASS) (\S+)", done.stdout,
                             re.M)
    )
    assert outcomes, done.stdout[-3000:] + done.stderr[-2000:]
    return outcomes


def test_every_form_makes_a_twin_that_fails_where_its_original_passes(tmp_path: Path) -> None:
    root, tests = suite(tmp_path)
    keys = {junit_key(t.key) for t in find_tests(FORMS, "tests/test_forms.py")}
    eligible = all_sites([tests], root, keys)
    kinds = {s.kind for t in find_tests(FORMS, "tests/test_forms.py") for s in t.sites}
    assert kinds == {"literal", "far", "swap", "negate", "raises"}
    interrupt = "tests/test_forms.py::test_interrupt_is_never_unguarded"
    assert interrupt not in eligible  # KeyboardInterrupt would stop pytest itself
    planted = plant_twins(root, eligible, None, random.Random(11))
    assert len(planted.twins) == sum(len(v) for v in eligible.values()) == 30
    outcomes = run_pytest(root)
    twins = {n: o for n, o in outcomes.items() if n.partition("[")[0] in planted.twins}
    originals = {n: o for n, o in outcomes.items() if n not in twins}
    assert set(originals.values()) == {"PASSED"}, originals
    assert len(originals) == 25  # every real item, parameters included
    assert set(twins.values()) == {"FAILED"}, twins
    assert len(twins) == 32  # the parametrized test's twins carry its 3 parameters
    for twin, original in planted.twins.items():
        assert original in {f"tests/test_forms.py::{t.key.split('::', 1)[1]}"
                            for t in find_tests(FORMS, "tests/test_forms.py")}
        assert twin.rsplit("::", 1)[0] == original.rsplit("::", 1)[0]  # same class


def test_a_twin_changes_one_check_and_keeps_the_rest_of_the_source(tmp_path: Path) -> None:
    root, tests = suite(tmp_path)
    key = "tests/test_forms.py::test_escape"
    plant_twins(root, {key: [0]}, None, random.Random(5))
    text = (tests / "test_forms.py").read_text()
    originals = re.findall(r'^    assert name\("\\t"\) == "(n-\\t|.*)"$', text, re.M)
    assert len(originals) == 2 and originals[0] == "n-\\t"
    twin = originals[1]
    # double quotes kept, the escape kept, one character of the rest changed
    assert twin.endswith("\\t") and len(twin) == 4 and twin != "n-\\t"
    key = "tests/test_forms.py::test_parametrized"
    plant_twins(root, {key: [0]}, None, random.Random(5))
    text = (tests / "test_forms.py").read_text()
    assert text.count('@pytest.mark.parametrize(("n", "want"), [(1, 2), (2, 4), (5, 10)])') == 2
    assert text.count("    assert double(n) != want\n") == 1
    key = "tests/test_forms.py::CaseTest::test_raises"
    plant_twins(root, {key: [0]}, None, random.Random(5))
    text = (tests / "test_forms.py").read_text()
    assert text.count("        with self.assertRaises(ValueError):\n            parse(\"\")") == 1
    assert text.count("(self):\n        parse(\"\")\n") == 1  # the twin: the body, dedented


def test_default_sites_are_the_test_bodys_own_statements(tmp_path: Path) -> None:
    root, tests = suite(tmp_path)
    keys = {junit_key(t.key) for t in find_tests(FORMS, "tests/test_forms.py")}
    every, default = all_sites([tests], root, keys), default_sites([tests], root, keys)
    assert "tests/test_forms.py::test_nested" in every
    assert "tests/test_forms.py::test_nested" not in default  # inside a loop
    assert default["tests/test_forms.py::test_truth"] == [0, 1, 2]
    assert default["tests/test_forms.py::CaseTest::test_swaps"] == [0, 1, 2]
    # only the tests asked for (by their report ids' function)
    assert set(default_sites([tests], root, {"tests.test_forms::test_int"})) == {
        "tests/test_forms.py::test_int"}


def test_count_plants_distinct_tests_and_fewer_when_fewer_are_eligible(tmp_path: Path) -> None:
    root, _ = suite(tmp_path)
    eligible = {"tests/test_forms.py::test_int": [0], "tests/test_forms.py::test_dict": [0],
                "tests/test_forms.py::test_truth": [0, 1, 2]}
    planted = plant_twins(root, eligible, 8, random.Random(1))
    assert sorted(planted.twins.values()) == sorted(eligible)
    assert plant_twins(root, eligible, 0).twins == {}
    # a record that no longer matches the file (a check index it does not have): no twin
    assert plant_twins(root, {"tests/test_forms.py::test_int": [3]}, 8).twins == {}
    assert plant_twins(root, {"tests/test_gone.py::test_int": [0]}, 8).twins == {}


def test_twins_sit_after_their_original_and_not_always_last(tmp_path: Path) -> None:
    last = 0
    for seed in range(12):
        root, tests = suite(tmp_path / str(seed))
        planted = plant_twins(root, {"tests/test_forms.py::test_int": [0]}, 1,
                              random.Random(seed))
        (twin,) = planted.twins
        names = [n.name for n in ast.parse((tests / "test_forms.py").read_text()).body
                 if isinstance(n, ast.FunctionDef | ast.ClassDef)]
        at = names.index(twin.rsplit("::", 1)[1])
        assert at > names.index("test_int")
        last += at == len(names) - 1
    assert last < 12


def test_names_are_made_of_the_modules_words_and_never_taken() -> None:
    rng = random.Random(3)
    words = ["slug", "separator", "text", "unique"]
    taken = {"test_slugify_separator"}
    for _ in range(50):
        name = twin_name("test_slugify_separator", words, taken, rng)
        assert name.startswith("test_") and name not in taken and not re.search(r"\d", name)
        parts = name.split("_")[1:]
        assert set(parts) <= {"slugify", "separator", *words} and 1 <= len(parts) <= 6
        taken.add(name)
    assert re.fullmatch(r"test[A-Z]\w+", twin_name("testSize", words, set(), rng))


def test_near_values_keep_type_and_stay_near() -> None:
    rng = random.Random(9)
    for _ in range(200):
        assert 1 <= abs(near_int(3, rng) - 3) <= 3 and near_int(3, rng) >= 0
        assert 0 < near_int(0, rng) <= 3  # no sign appears from nowhere
        step = abs(near_int(1000, rng) - 1000)
        assert 20 <= step <= 100  # 2-10% of a large value
        new = far_float(0.2, rng)
        # far enough for pytest.approx's default tolerance, near enough to look real
        assert 0.05 <= abs(new - 0.2) / 0.2 <= 0.5 and new != pytest.approx(0.2)
        assert far_float(0.0, rng) in (0.25, 0.5, 1.0, 1.5, 2.0)
    for token in ('"n-\\t"', "'x\\u00e9y'", 'r"a\\d"', 'b"n-1"', '""', "'!!!'", '"""ab"""'):
        new = near_string_token(token, rng)
        assert new is not None, token
        old_value, new_value = ast.literal_eval(token), ast.literal_eval(new)
        assert type(new_value) is type(old_value) and new_value != old_value
        assert new[0] == token[0] and new[-1] == token[-1]
        assert len(new_value) - len(old_value) in (0, 1)
    assert near_string_token('"a" "b"', rng) is None  # two tokens: not one literal


def test_a_run_plants_eight_twins_or_one_per_ten_eligible_tests_at_most_64() -> None:
    assert [twins_for(n) for n in (0, 1, 7, 8, 9, 80, 81, 90, 91, 640, 641, 10_000)] == [
        0, 1, 7, 8, 8, 8, 9, 9, 10, 64, 64, 64]
    eligible = {f"t.py::test_{i}": [0] for i in range(100)} | {"t.py::test_none": []}
    assert (run_count(eligible, True), run_count(eligible, False),
            run_count(eligible, None)) == (10, 0, None)


def test_a_twin_shadows_no_name_and_unreadable_modules_get_none(tmp_path: Path) -> None:
    root, tests = suite(tmp_path)
    module = tests / "test_forms.py"
    # every name the generator could pick for test_int's twin is already bound
    words = ["int", *re.findall(r"[a-z]+", FORMS)]
    taken = "".join(f"test_{w} = 1\ntest_int_{w} = 1\ntest_{w}_int = 1\n" for w in words)
    module.write_text(FORMS + "\n" + taken)
    planted = plant_twins(root, {"tests/test_forms.py::test_int": [0]}, None, random.Random(2))
    (twin,) = planted.twins
    bound = {n.id for n in ast.walk(ast.parse(FORMS + taken)) if isinstance(n, ast.Name)}
    assert twin.rsplit("::", 1)[1] not in bound
    (tests / "test_latin.py").write_bytes(b"def test_x():\n    assert 'caf\xe9' == 'x'\n")
    assert all_sites([tests], root, {"tests.test_latin::test_x"}) == {}
    assert plant_twins(root, {"tests/test_latin.py::test_x": [0]}, None).twins == {}
