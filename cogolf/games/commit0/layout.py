"""Finding a library's parts in a source tree: its package files and its tests.

Also fetching a source tree: a local directory is used as it is; anything else
is a PyPI requirement whose sdist is downloaded with pip and unpacked safely.
"""

from __future__ import annotations

import ast
import re
import shutil
import subprocess
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from packaging.requirements import InvalidRequirement, Requirement

from cogolf import safeio
from cogolf.evaluation.pyenv import runner_python

MAX_SUBMISSION_FILES = 5000
MAX_SUBMISSION_BYTES = 64 * 1024 * 1024
TEST_DIR_NAMES = ("tests", "test", "testing")
NOT_LIBRARY = {"docs", "doc", "examples", "example", "benchmarks", "bench", "scripts", "tools",
               "build", "dist", ".git", ".tox", ".nox", "__pycache__", *TEST_DIR_NAMES}
NOT_MODULES = {"setup.py", "conftest.py", "noxfile.py", "fabfile.py", "tasks.py", "dodo.py"}
PIP_TIMEOUT_SECONDS = 300


class SourceError(ValueError):
    """The source cannot be fetched or has no recognisable library or tests."""


class SubmissionError(ValueError):
    """The submission cannot be used; the message names the file."""


@dataclass(frozen=True)
class Layout:
    root: Path
    package_paths: tuple[str, ...]  # relative: package dirs and single-file modules
    tests_paths: tuple[str, ...]  # relative: test directories or single test modules

def fetch_source(source: str, workdir: Path, *, git: Path | None = None,
                 commit: str | None = None) -> Path:
    """A local tree as is, a git repository at a commit, or the unpacked sdist of a
    PyPI requirement (built from source: only the library itself, never its build
    backend, so `--no-binary` applies to its name alone)."""
    if git is not None:
        return checkout(git, commit, workdir / "git")
    local = Path(source)
    if local.is_dir():
        return local.resolve()
    if local.exists():
        raise SourceError(f"{source}: a file; give a source directory or a PyPI requirement")
    try:
        name = Requirement(source).name
    except InvalidRequirement as exc:
        raise SourceError(f"{source!r}: neither a directory nor a requirement ({exc})") from exc
    download = workdir / "sdist"
    download.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [*download_pip(), "download", "--no-deps", "--no-binary", name,
         "--disable-pip-version-check", "-q", "-d", str(download), source],
        capture_output=True, timeout=PIP_TIMEOUT_SECONDS, check=False,
    )
    if pip_failed(done.returncode, done.stderr):
        raise SourceError(f"pip could not download the sdist of {source!r}: "
                          f"{pip_reason(done.stderr)}")
    archives = sorted(p for p in download.iterdir() if p.is_file())
    if len(archives) != 1 or archives[0].suffix == ".whl":
        raise SourceError(f"expected one sdist for {source!r}, found "
                          f"{', '.join(p.name for p in archives) or 'none'}")
    return unpack(archives[0], workdir / "unpacked")


_PIP_NOISE = re.compile(
    r"(See above for output|note: This error originates from a subprocess|"
    r"hint: See above|^\s*[│╰─>]+\s*$|^\s*$|full command:|cwd:|\[end of output\]|"
    r"^\s*\[\d+ lines of output\]|^\s*error: subprocess-exited-with-error)"
)


def download_pip() -> list[str]:
    """pip of the interpreter the tests will run on, so that environment markers
    (`python_full_version < "3.11.3"`) are those of the runs, not of this process."""
    base, _ = runner_python()
    return [str(base), "-m", "pip"]


def pip_failed(returncode: int, stderr: bytes) -> bool:
    """pip 23.2 crashes on legacy metadata (`name (>=1.0)`) in a warning it gives after
    every file is saved: that crash is not a failed download."""
    return returncode != 0 and b"in warn_legacy_versions_and_specifiers" not in stderr


def pip_reason(stderr: bytes, lines: int = 8) -> str:
    """pip's actual reason for failing: its output without the boilerplate that only
    points elsewhere ("See above for output"), the last few meaningful lines."""
    text = stderr.decode("utf-8", "replace")
    kept = [line.strip(" │") .strip() for line in text.splitlines()
            if not _PIP_NOISE.search(line)]
    kept = [line for line in kept if line]
    return " / ".join(kept[-lines:])[:1500] or "pip failed without saying why"


_REF = re.compile(r"^[A-Za-z0-9][A-Za-z0-9._/-]{0,199}$")


def checkout(repo: Path, commit: str | None, dest: Path) -> Path:
    """A copy of `repo`'s tree at `commit`, without its .git (hooks never run)."""
    if commit is None:
        raise SourceError("--git needs --commit (the commit the benchmark pins)")
    if not _REF.match(commit) or ".." in commit:
        raise SourceError(f"--commit {commit[:60]!r}: not a commit id or a ref name")
    if not (repo / ".git").exists() and not (repo / "HEAD").is_file():
        raise SourceError(f"{repo}: not a git repository")
    git = ["git", "-c", "safe.directory=*", "-c", "core.hooksPath=/dev/null"]
    steps = [
        ("clone", [*git, "clone", "--quiet", "--no-hardlinks", "--no-checkout", str(repo),
                   str(dest)]),
        ("checkout", [*git, "-C", str(dest), "-c", "advice.detachedHead=false", "checkout",
                      "--quiet", commit, "--"]),
    ]
    for step, argv in steps:
        done = subprocess.run(argv, capture_output=True, timeout=PIP_TIMEOUT_SECONDS,
                              check=False)
        if done.returncode != 0:
            why = done.stderr.decode("utf-8", "replace").strip().splitlines()[-2:]
            raise SourceError(f"{repo} at {commit}: git {step} failed: {' / '.join(why)}")
    shutil.rmtree(dest / ".git")
    return dest


def unpack(archive: Path, dest: Path) -> Path:
    dest.mkdir(parents=True, exist_ok=True)
    if archive.name.endswith((".tar.gz", ".tgz", ".tar.bz2", ".tar")):
        with tarfile.open(archive) as tar:
            tar.extractall(dest, filter="data")  # refuses absolute paths, '..', devices
    elif archive.suffix == ".zip":
        with zipfile.ZipFile(archive) as zf:
            for name in zf.namelist():
                target = (dest / name).resolve()
                if not target.is_relative_to(dest.resolve()):
                    raise SourceError(f"{archive.name}: member {name!r} escapes the archive")
            zf.extractall(dest)
    else:
        raise SourceError(f"{archive.name}: not an sdist archive (.tar.gz or .zip)")
    tops = [p for p in dest.iterdir()]
    return tops[0] if len(tops) == 1 and tops[0].is_dir() else dest


def candidate_entries(root: Path) -> list[str]:
    """Every top-level entry that could be library code (under `src/` when it exists)."""
    base = root / "src" if (root / "src").is_dir() else root
    return [str(e.relative_to(root)) for e in sorted(base.iterdir()) if _is_library_entry(e)]


def _is_library_entry(entry: Path) -> bool:
    name = entry.name
    if name in NOT_LIBRARY or name.startswith(".") or name.endswith(".egg-info"):
        return False
    if entry.is_dir():
        return (entry / "__init__.py").is_file()
    return entry.suffix == ".py" and name not in NOT_MODULES


def given_layout(root: Path, tests: str | None, packages: list[str] | None) -> Layout | None:
    """The layout named on the command line (`--tests`, `--package`); None when not given."""
    if tests is None and not packages:
        return None
    for rel in [*(packages or []), *([tests] if tests else [])]:
        if Path(rel).is_absolute() or ".." in Path(rel).parts or not (root / rel).exists():
            raise SourceError(f"{root}: path {rel!r} does not exist in the source")
    found = list(packages or [])
    if not found:
        found = [e for e in candidate_entries(root) if e != tests]
    tests_paths = (tests,) if tests else ()
    return Layout(root=root, package_paths=tuple(found), tests_paths=tests_paths)


def find_test_units(test_files: set[str], library_tops: set[str]) -> tuple[str, ...]:
    """The paths that hold the collected test files, as few and as high as possible
    without taking library code: a root test module stays a file (`test.py`), a test
    folder at the top is taken whole (`tests`, `portalocker_tests`), and inside a
    library package only the first test-named folder or module on the way
    (`voluptuous/tests`, `pkg/sub/test_x.py`). A library module that pytest collected
    for its doctests (a conftest may collect them) is no test module: it stays library."""
    units: set[str] = set()
    for rel in test_files:
        parts = rel.split("/")
        lead = 1 if parts[0] == "src" and len(parts) > 1 else 0
        top = parts[lead].removesuffix(".py")
        if top not in library_tops or len(parts) == lead + 1:
            units.add("/".join(parts[:lead + 1]))
            continue
        named = [i for i, part in enumerate(parts) if i > lead and _is_test_name(part)]
        if named:
            units.add("/".join(parts[:named[0] + 1]))
    ordered = sorted(units)
    return tuple(u for u in ordered if not any(u.startswith(o + "/") for o in ordered if o != u))


def _is_test_name(part: str) -> bool:
    stem = part.removesuffix(".py")
    return bool(_TEST_NAME.search(stem)) or stem.startswith("test") or stem.endswith("_test")


_TEST_NAME = re.compile(r"(^|_)(tests?|testing)($|_)")


def library_tops(root: Path, built: set[str], test_files: set[str]) -> set[str]:
    """The wheel's top-level names that are the library: not a top named as tests
    (`portalocker_tests`) nor one holding only test modules, conftest and __init__."""
    base = root / "src" if (root / "src").is_dir() else root
    tops = set()
    for top in built:
        if _TEST_NAME.search(top):
            continue
        folder = base / top
        if folder.is_dir():
            others = [p for p in folder.rglob("*.py")
                      if p.name != "conftest.py" and not _empty_init(p)
                      and p.relative_to(root).as_posix() not in test_files]
            if not others:
                continue
        tops.add(top)
    return tops


def _empty_init(path: Path) -> bool:
    """An `__init__.py` that only marks a package (nothing but a docstring)."""
    if path.name != "__init__.py":
        return False
    try:
        body = ast.parse(path.read_text(encoding="utf-8", errors="replace")).body
    except SyntaxError:
        return False
    return all(isinstance(n, ast.Expr) and isinstance(n.value, ast.Constant) for n in body)


def layout_from_collection(root: Path, collected: set[str], library_tops: set[str]) -> Layout:
    """The layout pytest's own collection of the original implies: `collected` holds the
    relative paths of every test file (collected or failing to collect), `library_tops`
    the top-level names the library's wheel installs."""
    if not collected:
        raise SourceError(f"{root}: pytest collected no test on the original; name the test "
                          "folder with --tests")
    units = find_test_units(collected, library_tops)
    packages = [e for e in candidate_entries(root)
                if Path(e).name.removesuffix(".py") in library_tops and e not in units]
    if not packages:
        raise SourceError(f"{root}: no library package found beside the tests "
                          f"({', '.join(units)}); name it with --package")
    return Layout(root=root, package_paths=tuple(packages), tests_paths=units)


def under(rel: Path | str, paths: tuple[str, ...]) -> bool:
    text = Path(rel).as_posix()
    return any(text == p or text.startswith(p + "/") for p in paths)


def library_files(root: Path, package_paths: tuple[str, ...],
                  tests_paths: tuple[str, ...] = ()) -> list[Path]:
    """Every .py file of the library, relative to `root`; test modules are never library."""
    out: list[Path] = []
    for rel in package_paths:
        path = root / rel
        if path.is_file():
            out.append(Path(rel))
        else:
            out.extend(p.relative_to(root) for p in sorted(path.rglob("*.py"))
                       if "__pycache__" not in p.parts)
    return [p for p in out if not under(p, tests_paths)]


def module_name(rel: Path, package_paths: tuple[str, ...]) -> str:
    """Dotted module name of a library file (`src/pkg/a/b.py` -> `pkg.a.b`)."""
    parts = list(rel.with_suffix("").parts)
    if parts and parts[0] == "src" and any(p.startswith("src/") for p in package_paths):
        parts = parts[1:]
    if parts[-1] == "__init__":
        parts = parts[:-1]
    return ".".join(parts)


def overlay_submission(
    package_paths: tuple[str, ...], submission: Path, work: Path
) -> list[str]:
    """Replace each package path in `work` with the submission's; returns notes.

    No link is followed anywhere in the submission: the folder itself, a component
    of a package path (`src -> elsewhere`) or anything below it is refused with its
    path, as are special files, more than MAX_SUBMISSION_FILES files or more than
    MAX_SUBMISSION_BYTES bytes. Compiled files are not copied."""
    notes = []
    try:
        safeio.open_dir_check(submission)
    except (safeio.UnsafeFile, OSError) as exc:
        raise SubmissionError(f"{submission}: {exc}") from exc
    files = 0
    for rel in package_paths:
        target = work / rel
        try:
            kind = safeio.entry_kind(submission, rel)
            if kind is None:
                notes.append(f"submission has no {rel}; the skeleton's stubs stay")
                continue
            if kind == "link":
                raise safeio.UnsafeFile(f"{rel}: a symbolic link; symbolic links are never "
                                        "followed")
            if kind == "other":
                raise safeio.UnsafeFile(f"{rel}: not a regular file or directory")
            if target.is_dir() and not target.is_symlink():
                shutil.rmtree(target)
            elif target.exists() or target.is_symlink():
                target.unlink()
            files += safeio.copy_tree(
                rel, target, top=submission,
                max_files=MAX_SUBMISSION_FILES - files, max_bytes=MAX_SUBMISSION_BYTES,
                ignore=lambda name: name == "__pycache__" or name.endswith(".pyc"), label=rel,
            )
        except (safeio.UnsafeFile, OSError) as exc:
            raise SubmissionError(str(exc) if isinstance(exc, safeio.UnsafeFile)
                                  else f"{rel}: cannot read ({exc.strerror})") from exc
    return notes
