"""Building a Commit-0 task from a real library (`cogolf commit0 prepare`).

Runs the library's suite against the original to record the reference ids,
writes the stubbed skeleton, and keeps whole any function the library needs
while being imported (found by importing the skeleton and reading the stub
marker out of the NotImplementedError), so the skeleton always imports.
"""

from __future__ import annotations

import json
import shutil
from collections.abc import Callable
from pathlib import Path

import structlog

from cogolf.evaluation.build import install_walled, package_tops
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
    detect_layout,
    fetch_source,
    library_files,
    module_name,
)
from cogolf.games.commit0.stubber import STUB_MARK, stub_source
from cogolf.games.commit0.suite import run_suite
from cogolf.games.commit0.task import DEFAULT_TIME_LIMIT_SECONDS, Commit0Task
from cogolf.games.commit0.wheelhouse import resolve_build_requirements, resolve_runtime_requirements

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


async def prepare(
    source: str,
    out: Path,
    *,
    tests: str | None = None,
    packages: list[str] | None = None,
    name: str | None = None,
    time_limit_seconds: float = DEFAULT_TIME_LIMIT_SECONDS,
) -> Commit0Task:
    if out.exists() and any(out.iterdir()):
        raise SourceError(f"{out}: exists and is not empty")
    with shared_tempdir("cogolf-prepare-") as tmp_name:
        tmp = Path(tmp_name)
        root = fetch_source(source, tmp / "fetch")
        layout = detect_layout(root, tests=tests, packages=packages)
        toolbox = build_toolbox(tmp / "toolbox")
        original = tmp / "original"
        shutil.copytree(root, original, ignore=_COPY_IGNORE)
        # Dependencies are resolved here, with the index reachable, and kept with the
        # task: scoring installs only from this wheelhouse.
        wheelhouse = tmp / "wheelhouse"
        resolve_build_requirements(original, wheelhouse)
        env = await _install_original(tmp, "env", toolbox, root, layout, wheelhouse)
        if resolve_runtime_requirements(tmp / "env-install" / "checked", wheelhouse):
            env = await _install_original(tmp, "env-deps", toolbox, root, layout, wheelhouse)
        run = await run_suite(env, original, layout.tests_path, tmp / "out", time_limit_seconds)
        if run.report is None:
            raise SourceError(f"the suite did not run on the original ({run.status}): "
                              f"{' / '.join(run.notes)}")
        reference = sorted(t for t, o in run.report.tests.items() if o is Outcome.PASSED)
        if not reference:
            raise SourceError("no test passed on the original library")
        skeleton = tmp / "skeleton"
        shutil.copytree(root, skeleton, ignore=_skeleton_ignore(root, layout))
        stubbed, kept = await _stub_until_importable(root, skeleton, layout, env)
        out.mkdir(parents=True, exist_ok=True)
        shutil.copytree(skeleton, out / "skeleton", ignore=_COPY_IGNORE)
        shutil.copytree(root / layout.tests_path, out / "hidden_tests", ignore=_COPY_IGNORE)
        if any(wheelhouse.glob("*.whl")):
            shutil.copytree(wheelhouse, out / "wheelhouse")
    task = Commit0Task(
        root=out,
        name=name or root.name,
        source=source,
        package_paths=layout.package_paths,
        tests_path=layout.tests_path,
        reference_ids=tuple(reference),
        time_limit_seconds=time_limit_seconds,
        stubbed=stubbed,
        kept=kept,
    )
    task.save()
    log.info("commit0_prepared", task=task.name, reference_ids=len(reference),
             stubbed=sum(len(v) for v in stubbed.values()), kept=sum(len(v) for v in kept.values()))
    return task


async def _install_original(tmp: Path, name: str, toolbox: Path, root: Path, layout: Layout,
                            wheelhouse: Path) -> PythonEnv:
    """A fresh venv with the original installed, built walled from a copy without tests."""
    build = tmp / f"{name}-build"
    shutil.copytree(root, build, ignore=_skeleton_ignore(root, layout))
    env = create_env(tmp / name, toolbox)
    installed = await install_walled(env, build, tmp / f"{name}-install",
                                     tops=package_tops(layout.package_paths),
                                     wheelhouse=wheelhouse)
    if not installed.ok:
        raise SourceError(f"the original library does not install: {installed.log}")
    return env


def _skeleton_ignore(root: Path, layout: Layout) -> Callable[[str, list[str]], set[str]]:
    tests_dir = (root / layout.tests_path).resolve()

    def ignore(directory: str, names: list[str]) -> set[str]:
        skipped = set(_COPY_IGNORE(directory, names))
        skipped.update(n for n in names if n.endswith(".egg-info"))
        if Path(directory).resolve() == tests_dir.parent:
            skipped.add(tests_dir.name)
        return skipped

    return ignore


async def _stub_until_importable(
    root: Path, skeleton: Path, layout: Layout, env: PythonEnv
) -> tuple[dict[str, list[str]], dict[str, list[str]]]:
    files = library_files(root, layout.package_paths)
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
                                          skeleton)
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
                           skeleton: Path) -> dict[str, str]:
    argv = [str(env.python), "-P", "-B", "-c", _IMPORT_CHECK, json.dumps([roots, modules])]
    walls = Walls(readable=(skeleton, env.toolbox, env.root), drop_uid=env.any_uid)
    run = await run_evaluator(argv, cwd=skeleton, wall_seconds=IMPORT_CHECK_SECONDS, walls=walls)
    try:
        lines = run.stdout.decode("utf-8", "replace").strip().splitlines()
        data = json.loads(lines[-1]) if lines else None
    except ValueError:
        data = None
    if not isinstance(data, dict):
        raise SourceError(f"the skeleton import check failed: {run.stderr[-500:]!r}")
    return {str(k): str(v) for k, v in data.items()}
