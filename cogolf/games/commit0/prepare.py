"""Building a Commit-0 task from a real library (`cogolf commit0 prepare`).

Installs the original with its dependencies (resolved into the task's wheelhouse),
runs its suite twice by pytest's own discovery to find the tests and record the
reference ids (those that passed both times), reports what shrinks the reference
(collection errors, skips, xfails, flaky tests), writes the stubbed skeleton,
and keeps whole any function the library needs while being imported (found by
importing the skeleton and reading the stub marker out of the NotImplementedError),
so the skeleton always imports.
"""

from __future__ import annotations

import json
import shutil
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import structlog

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
from cogolf.games.commit0.stubber import STUB_MARK, stub_source
from cogolf.games.commit0.suite import SuiteRun, run_suite
from cogolf.games.commit0.task import DEFAULT_TIME_LIMIT_SECONDS, Commit0Task
from cogolf.games.commit0.wheelhouse import (
    resolve_build_requirements,
    resolve_dependencies,
    wheel_tops,
)

log = structlog.get_logger(__name__)

MAX_KEEP_ROUNDS = 30
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


async def prepare(
    source: str,
    out: Path,
    *,
    tests: str | None = None,
    packages: list[str] | None = None,
    name: str | None = None,
    time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS,
    git: Path | None = None,
    commit: str | None = None,
    official_ids: Path | None = None,
    requirements: tuple[str, ...] = (),
    accept_partial_reference: bool = False,
) -> Commit0Task:
    """Build a task. The tests are what pytest's own collection of the original finds
    (`--tests` names them instead); the original runs twice, and the reference is the
    ids that passed both times (the others are reported as flaky)."""
    if out.exists() and any(out.iterdir()):
        raise SourceError(f"{out}: exists and is not empty")
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
        wheelhouse = tmp / "wheelhouse"
        resolve_build_requirements(original, wheelhouse)
        excluded = given.tests_paths if given else ()
        base = root / "src" if (root / "src").is_dir() else root
        # the first build says which names the library installs; any of the tree's may
        tops = (package_tops(given.package_paths) if given and packages
                else {e.name.removesuffix(".py") for e in base.iterdir()})
        env = await _install_original(tmp, "env", toolbox, root, excluded, tops, wheelhouse)
        checked = tmp / "env-install" / "checked"
        built_tops = wheel_tops(checked)
        deps = resolve_dependencies(original, checked, wheelhouse, list(requirements))
        if any(wheelhouse.glob("*.whl")):
            env = await _install_original(tmp, "env-deps", toolbox, root, excluded, tops,
                                          wheelhouse)
        plugins = tuple(deps.plugins)
        asked = given.tests_paths if given else ()
        runs = []
        for i in (1, 2):
            run = await run_suite(env, original, asked, tmp / f"out{i}", time_limit_seconds,
                                  plugins=plugins, canaries=False,
                                  ignore=() if asked else not_tests(root))
            if run.report is None:
                raise SourceError(f"the suite did not run on the original ({run.status}): "
                                  f"{' / '.join(run.notes)}")
            runs.append(run)
        first, second = runs
        files = _test_files(root, first)
        if given and given.tests_paths:
            layout = given
        else:
            layout = layout_from_collection(root, files, library_tops(root, built_tops, files))
            if given:  # --package given, the tests found by collection
                layout = Layout(root, given.package_paths, layout.tests_paths)
        found = _reference(first, second, official, files, layout.tests_paths)
        if found["collect_errors"] and not accept_partial_reference:
            errors = found["collect_errors"]
            raise PartialReference(
                f"the original loses tests to {len(errors)} collection error(s) "
                f"({', '.join(errors[:5])}{', ...' if len(errors) > 5 else ''}): the reference "
                "would be partial; pass --accept-partial-reference to accept it")
        reference = found.pop("reference")
        if not reference:
            raise SourceError("no test passed on the original library")
        skeleton = tmp / "skeleton"
        shutil.copytree(root, skeleton, ignore=_skeleton_ignore(root, layout.tests_paths))
        stubbed, kept = await _stub_until_importable(root, skeleton, layout, env, tmp / "imports")
        out.mkdir(parents=True, exist_ok=True)
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
    found["seconds"] = round(time.monotonic() - start, 1)
    task = Commit0Task(
        root=out,
        name=name or (root.name if git is None else source),
        source=source if git is None else f"{git}@{commit}",
        package_paths=layout.package_paths,
        tests_paths=layout.tests_paths,
        reference_ids=tuple(reference),
        time_limit_seconds=time_limit_seconds,
        stubbed=stubbed,
        kept=kept,
        plugins=plugins,
        official_ids=official,
        test_files=tuple(sorted(files)),
        prepare=found,
    )
    task.save()
    log.info("commit0_prepared", task=task.name, reference_ids=len(reference),
             stubbed=sum(len(v) for v in stubbed.values()), kept=sum(len(v) for v in kept.values()))
    return task


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


def _reference(first: SuiteRun, second: SuiteRun, official: tuple[str, ...],
               files: set[str], tests_paths: tuple[str, ...]) -> dict[str, Any]:
    """The reference ids (passed in both runs, in the hidden tests) and what the runs
    say beside them. Doctests pytest found in library modules are left out: scoring
    runs the hidden tests only."""
    assert first.report is not None and second.report is not None
    hidden = {junit_id(n) for r in (first, second) for n in r.collected
              if under(n.split("::", 1)[0], tests_paths)}
    passed = [{t for t, o in r.tests.items() if o is Outcome.PASSED and t in hidden}
              for r in (first.report, second.report)]
    both = set(first.report.tests) & set(second.report.tests)
    outcomes = list(first.report.tests.values())
    xfailed = sum(1 for o in first.calls.values() if o == "xfailed")
    found: dict[str, Any] = {
        "reference": sorted(passed[0] & passed[1]),
        "collected": len(first.collected),
        "passed_per_run": [len(p) for p in passed],
        "failed": outcomes.count(Outcome.FAILED),
        "errors": outcomes.count(Outcome.ERROR),
        "skipped": outcomes.count(Outcome.SKIPPED) - xfailed,
        "xfailed": xfailed,
        "collect_errors": sorted(set(first.collect_errors) | set(second.collect_errors)),
        # passed in one run, not the other: flaky; in one run only (a parameter drawn from
        # the clock, say): an unstable id, which no later run can match either
        "flaky": sorted((passed[0] ^ passed[1]) & both),
        "unstable_ids": sorted((passed[0] ^ passed[1]) - both),
    }
    if official:
        ours = {to_ours(n) for n in official}
        found["official"] = {
            "listed": len(official),
            "in_reference": len(ours & set(found["reference"])),
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
