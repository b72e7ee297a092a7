"""Finding a library's parts in a source tree: its package files and its tests.

Also fetching a source tree: a local directory is used as it is; anything else
is a PyPI requirement whose sdist is downloaded with pip and unpacked safely.
"""

from __future__ import annotations

import shutil
import subprocess
import sys
import tarfile
import zipfile
from dataclasses import dataclass
from pathlib import Path

from cogolf import safeio

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
    tests_path: str  # relative: the test directory


def fetch_source(source: str, workdir: Path) -> Path:
    """A local tree as is, or the unpacked sdist of a PyPI requirement."""
    local = Path(source)
    if local.is_dir():
        return local.resolve()
    if local.exists():
        raise SourceError(f"{source}: a file; give a source directory or a PyPI requirement")
    download = workdir / "sdist"
    download.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "pip", "download", "--no-deps", "--no-binary", ":all:",
         "--disable-pip-version-check", "-q", "-d", str(download), source],
        capture_output=True, timeout=PIP_TIMEOUT_SECONDS, check=False,
    )
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise SourceError(f"pip could not download the sdist of {source!r}: {' / '.join(tail)}")
    archives = sorted(p for p in download.iterdir() if p.is_file())
    if len(archives) != 1:
        raise SourceError(f"expected one sdist for {source!r}, found {len(archives)}")
    return unpack(archives[0], workdir / "unpacked")


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


def detect_layout(root: Path, *, tests: str | None = None,
                  packages: list[str] | None = None) -> Layout:
    tests_path = tests or next((n for n in TEST_DIR_NAMES if (root / n).is_dir()), None)
    if tests_path is None or not (root / tests_path).is_dir():
        raise SourceError(f"{root}: no test directory (looked for {', '.join(TEST_DIR_NAMES)}); "
                          "name it with --tests")
    if packages:
        for p in packages:
            if not (root / p).exists():
                raise SourceError(f"{root}: package path {p!r} does not exist")
        found = list(packages)
    else:
        base = root / "src" if (root / "src").is_dir() else root
        found = []
        for entry in sorted(base.iterdir()):
            if _is_library_entry(entry):
                found.append(str(entry.relative_to(root)))
    if not found:
        raise SourceError(f"{root}: no package found; name it with --package")
    return Layout(root=root, package_paths=tuple(found), tests_path=tests_path)


def _is_library_entry(entry: Path) -> bool:
    name = entry.name
    if name in NOT_LIBRARY or name.startswith(".") or name.endswith(".egg-info"):
        return False
    if entry.is_dir():
        return (entry / "__init__.py").is_file()
    return entry.suffix == ".py" and name not in NOT_MODULES


def library_files(root: Path, package_paths: tuple[str, ...]) -> list[Path]:
    """Every .py file of the library, relative to `root`."""
    out: list[Path] = []
    for rel in package_paths:
        path = root / rel
        if path.is_file():
            out.append(Path(rel))
        else:
            out.extend(p.relative_to(root) for p in sorted(path.rglob("*.py"))
                       if "__pycache__" not in p.parts)
    return out


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
