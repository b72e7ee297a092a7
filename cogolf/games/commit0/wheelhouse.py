"""Resolving a library's dependencies when its task is prepared, never at scoring.

Build requirements the toolbox lacks (hatchling, flit-core, ...), runtime
requirements (`Requires-Dist` of the original's wheel) and test requirements
(its test extras, test dependency groups, test requirement files, and what the
task adds) are downloaded with their own dependencies as wheels only
(`--only-binary :all:`: nothing is built, so no downloaded code runs here) into
the task's wheelhouse. The toolbox's own distributions (pytest and what it
needs) are never taken from it, and tools that only run around a suite
(coverage, xdist, linters) are left out. Scoring installs from it with `--no-index`.
"""

from __future__ import annotations

import configparser
import importlib.metadata as metadata
import re
import shutil
import subprocess
import tomllib
import zipfile
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from cogolf.evaluation.pyenv import TOOLBOX_ROOTS
from cogolf.games.commit0.layout import SourceError, download_pip, pip_failed, pip_reason

DOWNLOAD_SECONDS = 300


def _key(name: str) -> str:
    return re.sub(r"[-_.]+", "-", name).lower()


def resolve_build_requirements(source: Path, wheelhouse: Path) -> list[str]:
    """Download the build requirements the toolbox does not provide; returns them."""
    try:
        data = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    except FileNotFoundError:
        return []
    except (OSError, ValueError) as exc:
        raise SourceError(f"pyproject.toml cannot be read: {exc}") from exc
    requires = data.get("build-system", {}).get("requires", [])
    if not isinstance(requires, list):
        raise SourceError("pyproject.toml: build-system.requires must be a list")
    provided = {_key(n) for n in TOOLBOX_ROOTS}
    needed = [r for r in map(str, requires) if _requirement_key(r) not in provided]
    download(needed, wheelhouse)
    return needed


TEST_NAMES = ("test", "tests", "testing")  # extras and dependency groups for the tests
FALLBACK_NAMES = ("dev",)  # used only when none of TEST_NAMES exists
REQUIREMENT_FILES = tuple(
    f"{stem}.{suffix}" for stem in ("requirements-test*", "requirements_test*",
                                    "test-requirements*", "test_requirements*",
                                    "requirements/test*", "tests/requirements*",
                                    "requirements-dev*", "requirements/dev*", "dev-requirements*")
    for suffix in ("txt", "in"))
# tools that run around a suite, not inside it: never needed to score
NOT_NEEDED = {"coverage", "pytest-cov", "pytest-xdist", "pytest-randomly", "pytest-sugar", "tox",
              "nox", "pre-commit", "ruff", "mypy", "flake8", "black", "isort", "pylint",
              "codecov", "twine", "build", "check-manifest", "sphinx", "bump2version",
              "pytest-runner", "pytest-flake8", "pytest-mypy", "pytest-black", "ipython", "ipdb",
              "autopep8", "pycodestyle", "pydocstyle", "pyflakes", "doc8", "docformatter",
              "restructuredtext-lint", "mccabe", "pip-tools", "wheel", "setuptools", "virtualenv"}
MAX_REQUIREMENT_FILE_BYTES = 256 * 1024
# extras that are tooling, not a feature the tests may exercise
NOT_FEATURES = re.compile(r"doc|dev|lint|typ|mypy|release|publish|format|style|build|bench|"
                          r"check|qa|all|test", re.IGNORECASE)


@dataclass
class Dependencies:
    """What `prepare` resolved into the wheelhouse, reported and kept in task.json."""

    runtime: list[str] = field(default_factory=list)
    test: list[str] = field(default_factory=list)  # with where each came from
    skipped: list[str] = field(default_factory=list)  # a test requirement pip could not get
    plugins: list[str] = field(default_factory=list)  # pytest11 modules of the wheelhouse

    def to_json(self) -> dict[str, list[str]]:
        return {"runtime": self.runtime, "test": self.test, "skipped": self.skipped,
                "plugins": self.plugins}


def wheel_metadata(checked: Path) -> tuple[str, list[str], list[str]] | None:
    """(name, Requires-Dist lines, Provides-Extra) of the one wheel in `checked`."""
    wheels = sorted(checked.glob("*.whl"))
    if len(wheels) != 1:
        return None
    with zipfile.ZipFile(wheels[0]) as zf:
        meta = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode("utf-8", "replace") if meta else ""
    headers = HeaderParser().parsestr(text)
    return (str(headers.get("Name") or ""), headers.get_all("Requires-Dist") or [],
            headers.get_all("Provides-Extra") or [])


def wheel_tops(checked: Path) -> set[str]:
    """The top-level names the one wheel in `checked` installs (`pkg`, `module` of module.py)."""
    wheels = sorted(checked.glob("*.whl"))
    if len(wheels) != 1:
        return set()
    with zipfile.ZipFile(wheels[0]) as zf:
        tops = {n.split("/")[0] for n in zf.namelist()}
    return {t.removesuffix(".py") for t in tops if not t.endswith((".dist-info", ".data"))}


def resolve_dependencies(source: Path, checked: Path, wheelhouse: Path,
                         extra: list[str]) -> Dependencies:
    """Download the library's dependencies and its test dependencies (test extras,
    dependency groups, requirement files, then `extra` from the task file) as wheels."""
    deps = Dependencies()
    name, requires, extras = wheel_metadata(checked) or ("", [], [])
    tests_extras = [e for e in extras if e.lower() in TEST_NAMES] or [
        e for e in extras if e.lower() in FALLBACK_NAMES]
    # optional features (pyjwt's `crypto`, portalocker's `redis`): their tests skip without
    features = [e for e in extras if e not in tests_extras and not NOT_FEATURES.search(e)]
    wanted = [*tests_extras, *features]
    for line in requires:
        req = _parse(line)
        if req is None:
            continue
        if req.marker is None or _holds(req.marker, ""):
            deps.runtime.append(str(req))
            continue
        for e in wanted:
            if _holds(req.marker, e):
                req.marker = None
                deps.test.append(f"{req} (extra {e})")
                break
    for found, origin in [*_group_requirements(source), *_file_requirements(source),
                          *((r, "task") for r in extra)]:
        req = _parse(found)
        if req is None or (req.marker is not None and not _holds(req.marker, "")):
            continue
        if origin.endswith((".txt", ".in")):
            # requirement files pin for one Python each (pip-compile output): the name only
            req.specifier, req.marker = SpecifierSet(), None
        deps.test.append(f"{req} ({origin})")
    own, toolbox = _key(name), toolbox_names()
    runtime = [r for r in deps.runtime if _requirement_key(r) not in toolbox | {own}]
    tests, seen = [], set()
    for text in deps.test:
        req = text.rsplit(" (", 1)[0]
        if req not in seen and _requirement_key(req) not in toolbox | NOT_NEEDED | {own}:
            seen.add(req)
            tests.append(text)
    deps.test = tests
    download(runtime, wheelhouse)  # the library cannot run without these: a failure is fatal
    requirements = [t.rsplit(" (", 1)[0] for t in tests]
    try:
        download([*runtime, *requirements], wheelhouse)
    except SourceError:
        # find the test requirements pip cannot get, then resolve the rest together
        probe = wheelhouse.parent / f"{wheelhouse.name}-probe"
        good = []
        for text, req in zip(tests, requirements, strict=True):
            try:
                download([*runtime, req], probe)
                good.append(req)
            except SourceError as exc:
                deps.skipped.append(f"{text}: {exc}"[:400])
        shutil.rmtree(probe, ignore_errors=True)
        download([*runtime, *good], wheelhouse)
    for wheel in wheelhouse.glob("*.whl"):
        if _key(wheel.name.split("-")[0]) in toolbox:
            wheel.unlink()  # the runner's own pytest stays the one that runs
    keep_newest(wheelhouse)
    deps.plugins = pytest_plugins(wheelhouse)
    return deps


def keep_newest(wheelhouse: Path) -> None:
    """One wheel per distribution (a build requirement and a test requirement may bring
    two versions of the same one): the newest stays."""
    by_name: dict[str, list[tuple[Version, Path]]] = {}
    for wheel in wheelhouse.glob("*.whl"):
        parts = wheel.name.split("-")
        try:
            version = Version(parts[1])
        except (InvalidVersion, IndexError):
            continue
        by_name.setdefault(_key(parts[0]), []).append((version, wheel))
    for found in by_name.values():
        for _, wheel in sorted(found)[:-1]:
            wheel.unlink()


def _parse(text: str) -> Requirement | None:
    try:
        return Requirement(text)
    except InvalidRequirement:
        return None


def _group_requirements(source: Path) -> list[tuple[str, str]]:
    """Requirements of the test dependency groups (PEP 735) of pyproject.toml."""
    try:
        data = tomllib.loads((source / "pyproject.toml").read_text(encoding="utf-8"))
    except (OSError, ValueError):
        return []
    groups = data.get("dependency-groups")
    if not isinstance(groups, dict):
        return []
    names = [g for g in groups if g.lower() in TEST_NAMES] or [
        g for g in groups if g.lower() in FALLBACK_NAMES]
    out: list[tuple[str, str]] = []
    pending, seen = list(names), set()
    while pending:
        group = pending.pop()
        if group in seen or not isinstance(groups.get(group), list):
            continue
        seen.add(group)
        for item in groups[group]:
            if isinstance(item, str):
                out.append((item, f"group {group}"))
            elif isinstance(item, dict) and isinstance(item.get("include-group"), str):
                pending.append(item["include-group"])
    return out


def _file_requirements(source: Path) -> list[tuple[str, str]]:
    """Requirement lines of the test requirement files (options, paths and `-e` skipped)."""
    files = sorted({f for pattern in REQUIREMENT_FILES for f in source.glob(pattern)
                    if f.is_file() and not f.is_symlink()})
    # a pip-compile output (`x.txt` beside its `x.in`) lists every transitive pin: the
    # `.in` file says what the tests need
    files = [f for f in files if not (f.suffix == ".txt" and f.with_suffix(".in").is_file())]
    dev = [f for f in files if "dev" in f.name]
    files = [f for f in files if f not in dev] or dev
    out: list[tuple[str, str]] = []
    for f in files:
        if f.stat().st_size > MAX_REQUIREMENT_FILE_BYTES:
            continue
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            line = line.split(" #", 1)[0].strip()
            if line and not line.startswith(("#", "-", ".", "/")) and "://" not in line:
                out.append((line, str(f.relative_to(source))))
    return out


def toolbox_names() -> set[str]:
    """The toolbox's distributions (pytest and what it needs): never taken from a wheelhouse."""
    names, pending = set(), list(TOOLBOX_ROOTS)
    while pending:
        name = pending.pop()
        if _key(name) in names:
            continue
        names.add(_key(name))
        try:
            requires = metadata.distribution(name).requires or []
        except metadata.PackageNotFoundError:
            continue
        for line in requires:
            req = _parse(line)
            if req is not None and (req.marker is None or _holds(req.marker, "")):
                pending.append(req.name)
    return names


def pytest_plugins(wheelhouse: Path) -> list[str]:
    """Modules the wheelhouse's distributions register as pytest plugins (`pytest11`);
    loaded explicitly with `-p`, since entry-point autoloading is off in every run."""
    plugins: set[str] = set()
    for wheel in wheelhouse.glob("*.whl"):
        with zipfile.ZipFile(wheel) as zf:
            entry = next((n for n in zf.namelist()
                          if n.endswith(".dist-info/entry_points.txt")), None)
            if entry is None:
                continue
            parser = configparser.ConfigParser(interpolation=None)
            try:
                parser.read_string(zf.read(entry).decode("utf-8", "replace"))
            except configparser.Error:
                continue
        if parser.has_section("pytest11"):
            for _, value in parser.items("pytest11"):
                module = value.split(":", 1)[0].strip()
                if re.fullmatch(r"[A-Za-z_][\w.]*", module):
                    plugins.add(module)
    return sorted(plugins)


def _holds(marker: Marker, extra: str) -> bool:
    try:
        return marker.evaluate({"extra": extra})
    except Exception:  # an unusual marker: keep the dependency
        return True


def _requirement_key(text: str) -> str:
    try:
        return _key(Requirement(text).name)
    except InvalidRequirement:
        return _key(text)


def download(requirements: list[str], wheelhouse: Path) -> None:
    if not requirements:
        return
    wheelhouse.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [
            *download_pip(),
            "download",
            "--only-binary",
            ":all:",
            "--disable-pip-version-check",
            "-q",
            "-d",
            str(wheelhouse),
            *requirements,
        ],
        capture_output=True,
        timeout=DOWNLOAD_SECONDS,
        check=False,
    )
    if pip_failed(done.returncode, done.stderr):
        raise SourceError(
            f"could not resolve {', '.join(requirements)} into wheels: {pip_reason(done.stderr)}"
        )
