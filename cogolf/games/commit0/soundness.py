"""Which twins are sound for a Commit-0 task, measured on the original at prepare.

A twin is sound when it fails wherever its original passes on a correct library.
That is mostly a property of the test (a check the run never reaches, a check
inside `try`, a value that changes when the test runs again), so it is measured
once: the original runs with a twin of every candidate check planted at once,
each right after its original, plus an unchanged copy of each candidate test. A
check is eligible when every item of its twin whose original is a reference id
failed and every item of the test's copy passed (a state- or time-dependent test
fails its copy). Twins planted together must not disturb the real tests either (a
failing twin may leave state behind): when a reference id is lost in the dry
run, the twins of its module are dropped and the dry run repeated. What one dry
run cannot see stays possible: a twin whose value was not drawn at prepare, or a
test whose state differs at the twin's later place.

Candidates are bounded so the dry run costs at most about one more run of the
suite: at most a few checks per test, tests with few items (a parametrized test
is twinned with all its parameters), and a cap on the twin items in all.
"""

from __future__ import annotations

import random
import shutil
from collections import Counter
from pathlib import Path
from typing import Any

from cogolf.evaluation.channel import junit_id
from cogolf.evaluation.pyenv import PythonEnv
from cogolf.evaluation.pytest_twins import COPY, TwinPlan, all_sites, function_of, junit_key
from cogolf.evaluation.reports import Outcome
from cogolf.games.commit0.suite import run_suite

MAX_CHECKS_PER_TEST = 4
MAX_ITEMS_PER_TEST = 32
MIN_ITEM_BUDGET = 200  # twin items in a dry run: this many, or as many as the suite has
MAX_ROUNDS = 3


async def measure_twins(env: PythonEnv, original: Path, tests_paths: tuple[str, ...],
                        scratch: Path, *, reference: set[str], collected: list[str],
                        wall_seconds: float, run_paths: tuple[str, ...] = (),
                        plugins: tuple[str, ...] = (), ignore: tuple[str, ...] = (),
                        test_seconds: float | None = None
                        ) -> tuple[dict[str, list[int]], dict[str, Any]]:
    """The eligible checks (`test key -> site indices`) of the tests under `tests_paths`
    and what measuring them found. The suite runs as the reference runs did (`run_paths`,
    `ignore`, `test_seconds`, in a tree of its own it may write); `reference` holds report
    ids, `collected` the node ids of the original's run."""
    rng = random.SystemRandom()
    items = Counter(function_of(junit_id(n)) for n in collected)
    functions = {function_of(t) for t in reference}
    tests = [original / t for t in tests_paths]
    candidates = {
        key: sorted(rng.sample(indices, min(MAX_CHECKS_PER_TEST, len(indices))))
        for key, indices in all_sites(tests, original, functions).items()
        if items[junit_key(key)] <= MAX_ITEMS_PER_TEST
    }
    budget = max(MIN_ITEM_BUDGET, len(collected))
    keys = rng.sample(sorted(candidates), len(candidates))
    chosen: dict[str, list[int]] = {}
    spent = 0
    for key in keys:
        cost = items[junit_key(key)] * (len(candidates[key]) + 1)  # and the copy
        if spent + cost <= budget:
            chosen[key] = candidates[key]
            spent += cost
    found: dict[str, Any] = {"measured_tests": len(chosen),
                             "measured_checks": sum(map(len, chosen.values())),
                             "rounds": 0, "dropped_modules": []}
    for round_no in range(1, MAX_ROUNDS + 1):
        if not chosen:
            break
        found["rounds"] = round_no
        tree = scratch / f"tree{round_no}"
        shutil.copytree(original, tree, symlinks=True)
        # a dry run judges nothing: it records the twins' outcomes
        run = await run_suite(env, tree, run_paths, scratch / f"out{round_no}", wall_seconds,
                              plugins=plugins, canaries=False, ignore=ignore,
                              twins=TwinPlan(chosen, None, frozenset(), dry_run=True),
                              test_seconds=test_seconds, writable_tree=True)
        shutil.rmtree(tree, ignore_errors=True)
        if run.report is None:
            found["error"] = f"the dry run did not finish ({run.status})"
            return {}, found
        lost = {t for t in reference if run.report.tests.get(t) is not Outcome.PASSED}
        if not lost:
            return _eligible(run.planted.sites, run.twin_originals, run.twin_outcomes,
                             reference), found
        modules = {key.split("::", 1)[0] for key in chosen}
        # the twins of the modules that lost a test; all of them when the loss is elsewhere
        dropped = {m for m in modules if any(_in_module(t, m) for t in lost)} or modules
        found["dropped_modules"] += sorted(dropped)
        chosen = {k: v for k, v in chosen.items() if k.split("::", 1)[0] not in dropped}
    if chosen or found["dropped_modules"]:
        found["error"] = "twins disturbed the real tests in every dry run: none is planted"
    return {}, found


def _in_module(test_id: str, module: str) -> bool:
    """Whether a report id (`tests.test_x.Class::test_y`) belongs to a module's tests."""
    prefix = junit_key(f"{module}::x").split("::")[0]
    head = test_id.split("::")[0]
    return head == prefix or head.startswith(prefix + ".")


def _eligible(sites: dict[str, tuple[str, int]], originals: dict[str, str],
              outcomes: dict[str, Outcome], reference: set[str]) -> dict[str, list[int]]:
    by_twin: dict[str, list[str]] = {}
    for item, original in originals.items():
        if original in reference:
            by_twin.setdefault(function_of(item), []).append(item)
    eligible: dict[str, list[int]] = {}
    unstable: set[str] = set()
    for twin, (key, site) in sites.items():
        items = by_twin.get(junit_key(twin), [])
        wanted = Outcome.PASSED if site == COPY else Outcome.FAILED
        if not items or not all(outcomes.get(i) is wanted for i in items):
            if site == COPY:
                unstable.add(key)
        elif site != COPY:
            eligible.setdefault(key, []).append(site)
    return {k: sorted(v) for k, v in sorted(eligible.items()) if k not in unstable}
