"""Building a Commit-0 task from a real library (`cogolf commit0 prepare`).

Installs the original with its dependencies (resolved into the task's wheelhouse,
with the pytest its era needs), runs its suite by pytest's own discovery to find
the tests, measures which tests' twins are sound with a dry run
(`cogolf.games.commit0.soundness`), writes the stubbed skeleton (keeping whole any
function the library needs while being imported, found by importing the skeleton
and reading the stub marker out of the NotImplementedError, so the skeleton always
imports), then scores the original as a submission, through the same path and
detectors every submission meets. The reference is the ids that passed both
times; prepare reports what shrinks it (collection errors with their fix, skips,
xfails, tests over the per-test limit, flaky tests) and refuses a task whose
original would not score `ok`.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass, replace
from pathlib import Path
from typing import Any

import structlog
from packaging.specifiers import SpecifierSet

from cogolf.evaluation.build import install_walled, package_tops
from cogolf.evaluation.channel import junit_id
from cogolf.evaluation.pyenv import (
    PythonEnv,
    build_toolbox,
    create_env,
    shared_tempdir,
)
from cogolf.evaluation.reports import Outcome
from cogolf.evaluation.walled import Walls, run_evaluator
from cogolf.games.commit0.hints import collection_errors, shadowed_modules, ships_tests
from cogolf.games.commit0.layout import (
    Layout,
    SourceError,
    fetch_source,
    given_layout,
    layout_from_collection,
    library_files,
    library_tops,
    module_name,
    under,
)
from cogolf.games.commit0.official import official_rate, read_id_file, to_ours
from cogolf.games.commit0.results import Commit0Result
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.soundness import measure_twins
from cogolf.games.commit0.stubber import STUB_MARK, stub_source
from cogolf.games.commit0.suite import SuiteRun, run_suite
from cogolf.games.commit0.task import (
    DEFAULT_TEST_TIME_LIMIT_SECONDS,
    DEFAULT_TIME_LIMIT_SECONDS,
    MAX_TIME_LIMIT_SECONDS,
    Commit0Task,
)
from cogolf.games.commit0.wheelhouse import (
    BENCHMARK_PYTEST,
    Dependencies,
    resolve_build_requirements,
    resolve_dependencies,
    runner_pytest,
    wheel_tops,
)

log = structlog.get_logger(__name__)

MAX_KEEP_ROUNDS = 30
MAX_UNSTABLE_IDS = 3  # ids the check run may lose without a result (or 1%)
IMPORT_CHECK_SECONDS = 120.0
_COPY_IGNORE = shutil.ignore_patterns(".git", "__pycache__", "*.pyc", ".tox", ".nox",
                                      ".pytest_cache", "build", "dist")

# Imports every module with the skeleton first on sys.path; prints the failures as JSON.
_IMPORT_CHECK = """
import importlib, json, sys
roots, modules = json.loads(sys.argv[1])
sys.path[:0] = roots
failures = {}
for name in modules:
    try:
        importlib.import_module(name)
    except BaseException as exc:
        failures[name] = f"{type(exc).__name__}: {exc}"
print(json.dumps(failures))
"""


class PartialReference(SourceError):
    """The original loses tests to collection errors (accepted only when asked)."""


@dataclass
class Discovery:
    """One environment for the original and pytest's discovery run of it."""

    wheelhouse: Path
    deps: Dependencies
    env: PythonEnv
    run: SuiteRun

    @property
    def lost(self) -> int:
        """Tests lost to the environment: collection errors, or all of them."""
        if self.run.report is None:
            return 1 << 30
        return len(self.run.collect_errors) + (self.run.exitstatus in (2, 3, 4))


async def prepare(
    source: str,
    out: Path,
    *,
    tests: str | None = None,
    packages: list[str] | None = None,
    name: str | None = None,
    time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS,
    test_time_limit_seconds: float = DEFAULT_TEST_TIME_LIMIT_SECONDS,
    git: Path | None = None,
    commit: str | None = None,
    official_ids: Path | None = None,
    requirements: tuple[str, ...] = (),
    extras: tuple[str, ...] = (),
    accept_partial_reference: bool = False,
) -> Commit0Task:
    """Build a task. The tests are what pytest's own collection of the original finds
    (`--tests` names them instead). The original runs by pytest's discovery, then once
    more as a submission through the scoring path (twins, canaries, tripwires, the
    hidden tests' layout): the reference is the ids that passed both times, the others
    are reported as flaky, and a task whose original would be tampered is refused."""
    if out.exists() and any(out.iterdir()):
        raise SourceError(f"{out}: exists and is not empty")
    for option, seconds in (("--time-limit", time_limit_seconds),
                            ("--test-time-limit", test_time_limit_seconds)):
        if not 0 < seconds <= MAX_TIME_LIMIT_SECONDS:
            raise SourceError(f"{option} {seconds:g}: must be in (0, "
                              f"{MAX_TIME_LIMIT_SECONDS:g}] seconds")
    official = tuple(read_id_file(official_ids)) if official_ids is not None else ()
    start = time.monotonic()
    with shared_tempdir("cogolf-prepare-") as tmp_name:
        tmp = Path(tmp_name)
        root = fetch_source(source, tmp / "fetch", git=git, commit=commit)
        given = given_layout(root, tests, packages)
        toolbox = build_toolbox(tmp / "toolbox")
        original = tmp / "original"
        shutil.copytree(root, original, ignore=_COPY_IGNORE)
        # Dependencies are resolved here, with the index reachable, and kept with the
        # task: scoring installs only from this wheelhouse.
        build_wheels = tmp / "build-requirements"
        resolve_build_requirements(original, build_wheels)
        excluded = given.tests_paths if given else ()
        base = root / "src" if (root / "src").is_dir() else root
        # the first build says which names the library installs; any of the tree's may
        tops = (package_tops(given.package_paths) if given and packages
                else {e.name.removesuffix(".py") for e in base.iterdir()})
        first_env = await _install_original(tmp, "env", toolbox, root, excluded, tops,
                                            build_wheels)
        checked = tmp / "env-install" / "checked"
        built_tops = wheel_tops(checked)
        asked = given.tests_paths if given else ()
        ignore = () if asked else not_tests(root)

        async def discover(label: str, pytest: str | None) -> Discovery:
            wheelhouse = tmp / f"wheelhouse{label}"
            wheelhouse.mkdir()
            for wheel in build_wheels.glob("*.whl"):
                shutil.copy2(wheel, wheelhouse / wheel.name)
            deps = resolve_dependencies(original, checked, wheelhouse, list(requirements),
                                        extras=extras, pytest=pytest)
            env = first_env
            if any(wheelhouse.glob("*.whl")):
                env = await _install_original(tmp, f"env-deps{label}", toolbox, root, excluded,
                                              tops, wheelhouse)
            tree = tmp / f"tree{label}"  # the run may write in it: a copy of its own
            shutil.copytree(original, tree, symlinks=True)
            run = await run_suite(env, tree, asked, tmp / f"out{label}", time_limit_seconds,
                                  plugins=tuple(deps.plugins), canaries=False, ignore=ignore,
                                  test_seconds=test_time_limit_seconds, writable_tree=True)
            shadowed = shadowed_modules(run.collect_errors, run.collect_messages, built_tops)
            if shadowed:
                run = replace(run, collect_errors=[e for e in run.collect_errors
                                                   if e not in shadowed],
                              notes=[*run.notes, f"{len(shadowed)} library module(s) that "
                                     "`python_files` names were left out (the installed copy "
                                     "shadows them; they hold no hidden test)"])
            return Discovery(wheelhouse, deps, env, run)

        found: dict[str, Any] = {}
        chosen = await discover("1", None)
        if chosen.lost and not chosen.deps.pytest and runner_pytest() not in SpecifierSet(
                BENCHMARK_PYTEST.removeprefix("pytest")):
            # the runner's pytest may be what loses them (a removed API, a deprecation
            # made an error): the benchmark's own pytest decides
            retry = await discover("2", BENCHMARK_PYTEST)
            found["pytest_retry"] = (f"the runner's pytest lost tests ({chosen.lost} collection "
                                     f"error(s)); {BENCHMARK_PYTEST} lost {retry.lost}")
            if retry.lost < chosen.lost:
                chosen = retry
        first, deps, env, wheelhouse = chosen.run, chosen.deps, chosen.env, chosen.wheelhouse
        plugins = tuple(deps.plugins)
        if first.report is None:
            raise SourceError(f"the suite did not run on the original ({first.status}): "
                              f"{' / '.join(first.notes)}{_output(first)}")
        if first.timed_out:
            raise SourceError(f"the original's suite does not finish within --time-limit "
                              f"{time_limit_seconds:g}s; give it more time")
        if not first.collected and not ships_tests(root):
            # said before pytest's own complaint (an empty testpaths, say), which hides it
            raise _no_tests(source)
        if first.stopped and not first.collected:
            raise SourceError(f"pytest stopped on the original before collecting a test "
                              f"({' / '.join(first.notes[:3])}){_output(first)}")
        if first.stopped and not accept_partial_reference:
            hung = (f" at {', '.join(first.time_limited[:3])} (over the per-test limit and "
                    "never back in Python: a blocking call, such as a socket the walls "
                    "refuse)" if first.time_limited else "")
            raise PartialReference(
                f"the original's run was stopped{hung}: {first.not_run} of "
                f"{len(first.collected)} collected tests never ran "
                f"({' / '.join(first.notes[:3])}): the reference would be partial; pass "
                "--accept-partial-reference to accept it")
        files = _test_files(root, first)
        if not files and not ships_tests(root):
            raise _no_tests(source)
        if given and given.tests_paths:
            layout = given
        else:
            try:
                layout = layout_from_collection(root, files,
                                                library_tops(root, built_tops, files))
            except SourceError as exc:
                raise SourceError(f"{exc}{_output(first)}") from exc
            if given:  # --package given, the tests found by collection
                layout = Layout(root, given.package_paths, layout.tests_paths)
        found.update(_discovered(first, official, files, layout.tests_paths))
        if found["collect_errors"] and not accept_partial_reference:
            errors = found["collect_errors"]
            raise PartialReference(
                f"the original loses tests to {len(errors)} collection error(s) "
                f"({collection_errors(errors, first.collect_messages)}): the reference "
                "would be partial; pass --accept-partial-reference to accept it")
        passed = found.pop("passed")
        if not passed:
            raise SourceError("no test passed on the original library"
                              + (f" ({' / '.join(first.notes)})" if first.notes else ""))
        started = time.monotonic()
        twins, found["twins"] = await measure_twins(
            env, original, layout.tests_paths, tmp / "twins", reference=set(passed),
            collected=first.collected, wall_seconds=time_limit_seconds, run_paths=asked,
            plugins=plugins, ignore=ignore, test_seconds=test_time_limit_seconds)
        found["twins"].update(tests=len(twins), checks=sum(map(len, twins.values())),
                              seconds=round(time.monotonic() - started, 1))
        skeleton = tmp / "skeleton"
        shutil.copytree(root, skeleton, ignore=_skeleton_ignore(root, layout.tests_paths))
        stubbed, kept = await _stub_until_importable(root, skeleton, layout, env, tmp / "imports")
        out.mkdir(parents=True, exist_ok=True)
        try:
            shutil.copytree(skeleton, out / "skeleton", ignore=_COPY_IGNORE)
            for unit in layout.tests_paths:
                target = out / "hidden_tests" / unit
                target.parent.mkdir(parents=True, exist_ok=True)
                if (root / unit).is_dir():
                    shutil.copytree(root / unit, target, ignore=_COPY_IGNORE)
                else:
                    shutil.copy2(root / unit, target)
            if any(wheelhouse.glob("*.whl")):
                shutil.copytree(wheelhouse, out / "wheelhouse")
            found["dependencies"] = deps.to_json()
            task = Commit0Task(
                root=out,
                name=name or (root.name if git is None else source),
                source=source if git is None else f"{git}@{commit}",
                package_paths=layout.package_paths,
                tests_paths=layout.tests_paths,
                reference_ids=tuple(passed),
                time_limit_seconds=time_limit_seconds,
                test_time_limit_seconds=test_time_limit_seconds,
                stubbed=stubbed,
                kept=kept,
                plugins=plugins,
                official_ids=official,
                test_files=tuple(sorted(files)),
                twins=twins,
                prepare=found,
            )
            task.save()
            # the original as a submission, scored as every submission will be
            check = await score_submission(task, root, entrant="original", quality=False)
            if check.status != "ok":
                raise SourceError(
                    f"the original, scored as a submission, is {check.status}: "
                    f"{' / '.join(check.notes[:5])}; a task whose original fails so is refused")
        except BaseException:
            shutil.rmtree(out, ignore_errors=True)
            raise
    reference = [t for t in passed if t not in check.not_passed]
    missing = [t for t in passed if check.not_passed.get(t) == "missing"]
    if len(missing) > max(MAX_UNSTABLE_IDS, len(passed) // 100) and not accept_partial_reference:
        # a few ids may change between runs (an address in a parameter); more means the
        # check run ended early, and every submission's run would too
        shutil.rmtree(out, ignore_errors=True)
        raise PartialReference(
            f"the original, scored as a submission, left {len(missing)} of the {len(passed)} "
            f"tests that passed at discovery without a result ({' / '.join(check.notes[:3])})"
            ": the reference would be partial; pass --accept-partial-reference to accept it")
    if not reference:
        shutil.rmtree(out, ignore_errors=True)
        raise SourceError("no test of the original passed when scored as a submission: "
                          + " / ".join(check.notes[:5]))
    found.update(_checked(passed, check))
    found["seconds"] = round(time.monotonic() - start, 1)
    task.reference_ids = tuple(reference)
    task.prepare = found
    task.save()
    log.info("commit0_prepared", task=task.name, reference_ids=len(reference),
             stubbed=sum(len(v) for v in stubbed.values()), kept=sum(len(v) for v in kept.values()))
    return task



def _no_tests(source: str) -> SourceError:
    return SourceError(f"{source}: this source ships no tests (no test module in it); "
                       "prepare from the library's git repository with --git REPO --commit SHA")

def _output(run: SuiteRun) -> str:
    """The end of pytest's own output (the original's: the operator may read it)."""
    lines = [line for line in run.output.splitlines() if line.strip()][-6:]
    return f"; pytest said: {' | '.join(lines)[-800:]}" if lines else ""


def _checked(passed: list[str], check: Commit0Result) -> dict[str, Any]:
    """What the check run (the original scored as a submission) took from the reference:
    a test that passed in discovery but not there is flaky (or depends on being run by
    discovery); one the check did not run at all is an unstable id."""
    lost = {t: o for t, o in check.not_passed.items() if t in set(passed)}
    counts = check.counts or {}
    return {
        "passed_per_run": [len(passed), len(passed) - len(lost)],
        "flaky": sorted(t for t, o in lost.items() if o != "missing"),
        "unstable_ids": sorted(t for t, o in lost.items() if o == "missing"),
        "check": {"status": check.status, "passed": check.passed, "total": check.total,
                  "seconds": check.seconds, "twins": counts.get("twins", 0),
                  "over_test_time_limit": counts.get("over_test_time_limit", 0),
                  "notes": check.notes[:10]},
    }


NOT_TESTS = ("docs", "doc", "examples", "example", "benchmarks", "bench", "build", "dist")


def not_tests(root: Path) -> tuple[str, ...]:
    """Folders pytest's discovery skips at prepare: documentation and examples hold
    conftest files and doctests of their own, not the library's tests."""
    return tuple(n for n in NOT_TESTS if (root / n).is_dir())


def _test_files(root: Path, run: SuiteRun) -> set[str]:
    """Relative paths of the test modules the run collected or failed to collect."""
    files = set()
    for node in [*run.collected, *run.collect_errors]:
        path = node.split("::", 1)[0]
        if path.endswith(".py") and (root / path).is_file():
            files.add(path)
    return files


def _discovered(first: SuiteRun, official: tuple[str, ...], files: set[str],
                tests_paths: tuple[str, ...]) -> dict[str, Any]:
    """What the discovery run found: the ids that passed in the hidden tests (the
    reference, before the check run) and the counts beside them. Doctests pytest found
    in library modules are left out: scoring runs the hidden tests only."""
    assert first.report is not None
    hidden = {junit_id(n) for n in first.collected if under(n.split("::", 1)[0], tests_paths)}
    outcomes = list(first.report.tests.values())
    xfailed = sum(1 for o in first.calls.values() if o == "xfailed")
    slowest = sorted(first.seconds.items(), key=lambda kv: -kv[1])[:5]
    found: dict[str, Any] = {
        "passed": sorted(t for t, o in first.report.tests.items()
                         if o is Outcome.PASSED and t in hidden),
        "collected": len(first.collected),
        "failed": outcomes.count(Outcome.FAILED),
        "errors": outcomes.count(Outcome.ERROR),
        "skipped": outcomes.count(Outcome.SKIPPED) - xfailed,
        "xfailed": xfailed,
        "collect_errors": sorted(set(first.collect_errors)),
        "collect_messages": {n: m for n, m in first.collect_messages.items() if m},
        "over_test_time_limit": [junit_id(n) for n in first.time_limited],
        "slowest": [[junit_id(n), round(t, 2)] for n, t in slowest],
        "notes": first.notes[:10],
    }
    if official:
        ours = {to_ours(n) for n in official}
        found["official"] = {
            "listed": len(official),
            "in_reference": len(ours & set(found["passed"])),
            "not_collected": len(ours - {to_ours(n) for n in first.collected}),
            "original_rate": official_rate(list(official), first.calls).to_json(),
        }
    return found


async def _install_original(tmp: Path, name: str, toolbox: Path, root: Path,
                            excluded: tuple[str, ...], tops: set[str],
                            wheelhouse: Path) -> PythonEnv:
    """A fresh venv with the original installed, built walled from a copy."""
    build = tmp / f"{name}-build"
    shutil.copytree(root, build, ignore=_skeleton_ignore(root, excluded))
    env = create_env(tmp / name, toolbox)
    installed = await install_walled(env, build, tmp / f"{name}-install", tops=tops,
                                     wheelhouse=wheelhouse)
    if not installed.ok:
        raise SourceError(f"the original library does not install: {installed.log}")
    return env


def _skeleton_ignore(root: Path, tests_paths: tuple[str, ...]
                     ) -> Callable[[str, list[str]], set[str]]:
    units = {(root / t).resolve() for t in tests_paths}

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set(_COPY_IGNORE(directory, names))
        skipped.update(n for n in names if n.endswith(".egg-info"))
        here = Path(directory).resolve()
        skipped.update(n for n in names if here / n in units)
        return skipped

    return ignore


async def _stub_until_importable(
    root: Path, skeleton: Path, layout: Layout, env: PythonEnv, scratch: Path
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    files = library_files(root, layout.package_paths, layout.tests_paths)
    modules = {rel: module_name(rel, layout.package_paths) for rel in files}
    keep: dict[str, set[str]] = {m: set() for m in modules.values()}
    import_roots = [str(skeleton / "src")] if any(
        p.startswith("src/") for p in layout.package_paths) else [str(skeleton)]
    stubbed: dict[str, list[str]] = {}
    for _ in range(MAX_KEEP_ROUNDS):
        for rel, module in modules.items():
            text = (root / rel).read_text(encoding="utf-8")
            try:
                result = stub_source(text, module, frozenset(keep[module]))
            except SyntaxError as exc:
                raise SourceError(f"{rel}: does not parse: {exc}") from exc
            (skeleton / rel).write_text(result.source, encoding="utf-8")
            stubbed[module] = result.stubbed
        failures = await _import_failures(env, import_roots, sorted(set(modules.values())),
                                          skeleton, scratch)
        added = False
        for module, message in failures.items():
            marker = message.split(STUB_MARK, 1)[1].strip() if STUB_MARK in message else ""
            owner, _, qualname = marker.partition(":")
            if owner in keep and qualname and qualname not in keep[owner]:
                keep[owner].add(qualname.strip("'\""))
                added = True
            elif not marker:
                log.warning("skeleton_import_failure", module=module, error=message)
        if not added:
            break
    kept = {m: sorted(v) for m, v in keep.items() if v}
    return {m: v for m, v in stubbed.items() if v}, kept


async def _import_failures(env: PythonEnv, roots: list[str], modules: list[str],
                           skeleton: Path, scratch: Path) -> dict[str, str]:
    argv = [str(env.python), "-P", "-B", "-c", _IMPORT_CHECK, json.dumps([roots, modules])]
    # a writable scratch is the run's TMPDIR: libraries that make a temporary file
    # while being imported (portalocker) need one
    scratch.mkdir(parents=True, exist_ok=True)
    walls = Walls(readable=(skeleton, env.toolbox, env.root, scratch), writable=(scratch,),
                  drop_uid=env.any_uid)
    run = await run_evaluator(argv, cwd=skeleton, wall_seconds=IMPORT_CHECK_SECONDS, walls=walls)
    try:
        lines = run.stdout.decode("utf-8", "replace").strip().splitlines()
        data = json.loads(lines[-1]) if lines else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise SourceError(f"the skeleton import check failed: {run.stderr[-500:]!r}")
    return {str(k): str(v) for k, v in data.items()}
