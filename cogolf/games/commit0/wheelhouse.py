"""Resolving a library's dependencies when its task is prepared, never at scoring.

Build requirements the toolbox lacks (hatchling, flit-core, ...), runtime
requirements (`Requires-Dist` of the original's wheel) and test requirements
(its test extras, test dependency groups, tox's `[testenv]` deps and extras, test
requirement files, and what the task adds) are downloaded with their own
dependencies as wheels only (`--only-binary :all:`: nothing is built, so no
downloaded code runs here) into the task's wheelhouse. The toolbox's own
distributions are never taken from it, with one exception: the pytest the
library's era needs (`choose_pytest`: the library's own pins and caps, or the
benchmark's pytest when the runner's fails it), which then shadows the
toolbox's. Tools that only run around a suite (coverage, xdist, linters) are
left out unless the task asks for them, and the library itself is never in its
own wheelhouse (a test tool that depends on it would bring another release).
Scoring installs from it with `--no-index`.
"""

from __future__ import annotations

import configparser
import contextlib
import importlib.metadata as metadata
import re
import shutil
import subprocess
import tomllib
import zipfile
from dataclasses import dataclass, field
from email.parser import HeaderParser
from pathlib import Path
from typing import Any

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement
from packaging.specifiers import SpecifierSet
from packaging.version import InvalidVersion, Version

from cogolf.evaluation.pyenv import TOOLBOX_ROOTS
from cogolf.games.commit0.layout import SourceError, download_pip, pip_failed, pip_reason

DOWNLOAD_SECONDS = 300
# what the benchmark's images ran (`pip install -U pytest` when they were built, autumn
# 2024): the pytest a library gets when the runner's fails it and it names none itself
BENCHMARK_PYTEST = "pytest>=8.3,<8.4"


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
    pytest: str = ""  # the wheelhouse's pytest (`pytest 8.3.5 (why)`); "": the runner's

    def to_json(self) -> dict[str, Any]:
        return {"runtime": self.runtime, "test": self.test, "skipped": self.skipped,
                "plugins": self.plugins, "pytest": self.pytest}


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


def resolve_dependencies(source: Path, checked: Path, wheelhouse: Path, extra: list[str],
                         *, extras: tuple[str, ...] = (), pytest: str | None = None
                         ) -> Dependencies:
    """Download the library's dependencies and its test dependencies (test extras and
    `extras`, dependency groups, tox's deps, requirement files, then `extra` from the
    task file, never filtered) as wheels. `pytest`: a pytest requirement to run on
    (otherwise `choose_pytest` decides from the library's own requirements)."""
    deps = Dependencies()
    name, requires, provided = wheel_metadata(checked) or ("", [], [])
    tox_found, tox_extras = tox_requirements(source)
    tests_extras = [e for e in provided if e.lower() in TEST_NAMES] or [
        e for e in provided if e.lower() in FALLBACK_NAMES]
    unknown = sorted({_key(e) for e in extras} - {_key(e) for e in provided})
    if unknown:
        raise SourceError(f"--extra {', '.join(unknown)}: the library has no such extra "
                          f"(it has: {', '.join(provided) or 'none'})")
    asked = [e for e in provided if _key(e) in {_key(x) for x in (*extras, *tox_extras)}]
    # optional features (pyjwt's `crypto`, portalocker's `redis`): their tests skip without
    features = [e for e in provided if e not in tests_extras and not NOT_FEATURES.search(e)]
    wanted = list(dict.fromkeys([*asked, *tests_extras, *features]))
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
    for found, origin in [*_group_requirements(source), *tox_found, *_file_requirements(source),
                          *((r, "task") for r in extra)]:
        req = _parse(found)
        if req is None or (req.marker is not None and not _holds(req.marker, "")):
            continue
        if origin.endswith((".txt", ".in")):
            # requirement files pin for one Python each (pip-compile output): the name only
            req.specifier, req.marker = SpecifierSet(), None
        deps.test.append(f"{req} ({origin})")
    own, toolbox = _key(name), toolbox_names()
    chosen = pytest if pytest is not None else choose_pytest(source, deps.test)
    runtime = [r for r in deps.runtime if _requirement_key(r) not in toolbox | {own}]
    tests = deps.test = select_tests(deps.test, toolbox | NOT_NEEDED | {own})
    download(runtime, wheelhouse)  # the library cannot run without these: fatal
    try:
        download([*runtime, chosen] if chosen else [], wheelhouse)
    except SourceError as exc:
        deps.skipped.append(f"{chosen} (the tests' pytest; the runner's runs): {exc}"[:400])
        chosen = ""
    runner = [chosen] if chosen else []
    requirements = [t.rsplit(" (", 1)[0] for t in tests]
    try:
        download([*runtime, *runner, *requirements], wheelhouse)
    except SourceError:
        # find the test requirements pip cannot get, then resolve the rest together
        probe = wheelhouse.parent / f"{wheelhouse.name}-probe"
        good = []
        for text, req in zip(tests, requirements, strict=True):
            try:
                download([*runtime, *runner, req], probe)
                good.append(req)
            except SourceError as exc:
                deps.skipped.append(f"{text}: {exc}"[:400])
        shutil.rmtree(probe, ignore_errors=True)
        download([*runtime, *runner, *good], wheelhouse)
    kept = {_requirement_key(t.rsplit(" (", 1)[0]) for t in tests if t.endswith("(task)")}
    prune(wheelhouse, own, toolbox - kept - ({"pytest"} if chosen else set()))
    version = wheel_version(wheelhouse, "pytest")
    if version is not None:
        deps.pytest = f"pytest {version} ({chosen})"
    deps.plugins = pytest_plugins(wheelhouse)
    return deps


def select_tests(found: list[str], left_out: set[str]) -> list[str]:
    """The test requirements to download (`req (origin)` each, first of a kind kept):
    none of `left_out` (the toolbox, tools around a suite, the library itself), except
    what the task asks for, which is always taken (its pytest is the task's choice)."""
    tests, seen = [], set()
    for text in found:
        req, origin = text.rsplit(" (", 1)
        key = _requirement_key(req)
        asked_for = origin == "task)" and key != "pytest"
        if (asked_for or key not in left_out) and req not in seen:
            seen.add(req)
            tests.append(text)
    return tests


def prune(wheelhouse: Path, own: str, toolbox: set[str]) -> None:
    """Leave out the library's own wheels (a test tool depending on it brings another
    release, which would shadow the build under test) and the toolbox's (the runner's
    tools stay the ones that run), then keep one wheel per distribution."""
    for wheel in wheelhouse.glob("*.whl"):
        key = _key(wheel.name.split("-")[0])
        if key == _key(own) or key in toolbox:
            wheel.unlink()
    keep_newest(wheelhouse)


def runner_pytest() -> Version:
    return Version(metadata.version("pytest"))


def choose_pytest(source: Path, tests: list[str]) -> str:
    """The pytest requirement the library's tests put (its extras, groups, tox deps and
    what the task adds: their specifiers; else a requirement file's pin of pytest: that
    version), or "" when the runner's pytest satisfies it."""
    specifiers = SpecifierSet()
    for text in tests:
        parsed = _parse(text.rsplit(" (", 1)[0])
        if parsed is not None and _key(parsed.name) == "pytest":
            specifiers &= parsed.specifier
    pinned = pinned_pytest(source)
    if pinned is not None and not str(specifiers):
        specifiers = SpecifierSet(f"=={pinned}")
    if not str(specifiers) or runner_pytest() in specifiers:
        return ""
    return f"pytest{specifiers}"


def pinned_pytest(source: Path) -> Version | None:
    """The lowest `pytest==V` of the source's requirement files (pip-compile output
    beside its `.in` included): the pytest its tests were last run with."""
    found = []
    for f in {f for pattern in REQUIREMENT_FILES for f in source.glob(pattern)}:
        if not f.is_file() or f.is_symlink() or f.stat().st_size > MAX_REQUIREMENT_FILE_BYTES:
            continue
        for line in f.read_text(encoding="utf-8", errors="replace").splitlines():
            match = re.match(r"\s*pytest\s*==\s*([0-9][0-9A-Za-z.]*)\s*(?:[;#\\]|$)", line)
            if match:
                with contextlib.suppress(InvalidVersion):
                    found.append(Version(match.group(1)))
    return min(found) if found else None


def wheel_version(wheelhouse: Path, name: str) -> Version | None:
    for wheel in wheelhouse.glob("*.whl"):
        parts = wheel.name.split("-")
        if _key(parts[0]) == _key(name) and len(parts) > 1:
            with contextlib.suppress(InvalidVersion):
                return Version(parts[1])
    return None


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


_TOX_FACTOR = re.compile(r"^[A-Za-z0-9_.,!{}-]+:\s")
_SUBSTITUTION = re.compile(r"^\{\[([^\]]+)\]([^}]+)\}$")
_SELF_EXTRAS = re.compile(r"^(?:-e\s*)?(?:\.|\{toxinidir\})/?\[([^\]]+)\]$")


def tox_requirements(source: Path) -> tuple[list[tuple[str, str]], list[str]]:
    """tox's `[testenv]` deps (requirement lines, `-r` files inside the source, `.[x]`
    as extras; lines for one factor only and other substitutions skipped) and its
    `extras`, from tox.ini, setup.cfg's `[testenv]` or pyproject's `legacy_tox_ini`."""
    parser = configparser.ConfigParser(interpolation=None, strict=False)
    origin = ""
    for name in ("tox.ini", "setup.cfg", "pyproject.toml"):
        path = source / name
        if not path.is_file() or path.is_symlink() or (
                path.stat().st_size > MAX_REQUIREMENT_FILE_BYTES):
            continue
        text = path.read_text(encoding="utf-8", errors="replace")
        if name == "pyproject.toml":
            try:
                text = tomllib.loads(text).get("tool", {}).get("tox", {}).get(
                    "legacy_tox_ini", "")
            except ValueError:
                continue
            if not isinstance(text, str):
                continue
        try:
            parser.read_string(text)
        except configparser.Error:
            continue
        if parser.has_section("testenv"):
            origin = name
            break
        parser = configparser.ConfigParser(interpolation=None, strict=False)
    if not origin:
        return [], []
    extras = [e.strip() for e in re.split(r"[,\s]+", parser.get("testenv", "extras",
                                                                 fallback="")) if e.strip()]
    out: list[tuple[str, str]] = []
    for line in _tox_lines(parser, parser.get("testenv", "deps", fallback=""), depth=0):
        line = line.split(" #", 1)[0].strip()
        if not line or line.startswith("#") or _TOX_FACTOR.match(line):
            continue
        self_extras = _SELF_EXTRAS.match(line)
        if self_extras:
            extras += [e.strip() for e in self_extras.group(1).split(",") if e.strip()]
        elif line.startswith("-r"):
            out += _requirement_lines(source, line[2:].strip().replace("{toxinidir}/", ""))
        elif not line.startswith(("-", ".", "/")) and "{" not in line and "://" not in line:
            out.append((line, f"{origin} [testenv] deps"))
    return out, extras


def _tox_lines(parser: configparser.ConfigParser, value: str, depth: int) -> list[str]:
    lines = []
    for line in value.splitlines():
        substitution = _SUBSTITUTION.match(line.strip())
        if substitution and depth < 3:
            section, key = substitution.groups()
            lines += _tox_lines(parser, parser.get(section, key, fallback=""), depth + 1)
        else:
            lines.append(line)
    return lines


def _requirement_lines(source: Path, rel: str) -> list[tuple[str, str]]:
    """The requirement lines of one file of the source (inside it, no link; options,
    paths, URLs and `-e` skipped)."""
    path = source / rel
    if Path(rel).is_absolute() or ".." in Path(rel).parts or not path.is_file() or (
            path.is_symlink() or path.stat().st_size > MAX_REQUIREMENT_FILE_BYTES):
        return []
    out = []
    for line in path.read_text(encoding="utf-8", errors="replace").splitlines():
        line = line.split(" #", 1)[0].strip()
        if line and not line.startswith(("#", "-", ".", "/")) and "://" not in line:
            out.append((line, rel))
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
    return [found for f in files for found in _requirement_lines(source, str(
        f.relative_to(source)))]


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
