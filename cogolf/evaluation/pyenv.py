"""Fresh virtual environments to install a library into and run its tests.

Both solo games run pytest under the walls, as an unprivileged uid, so the
venv is built on an interpreter every uid may execute (`runner_python`): this
one if its whole path is world-readable, else a system interpreter of the same
major.minor version. Each run gets a new venv (no pip inside, so creating one
is fast) whose
site-packages has a `.pth` line pointing at a *toolbox*: copies of pytest,
setuptools and wheel and their dependencies, taken from this interpreter's
environment. That makes installing and testing work offline. Building and
installing a library runs its code, so it happens walled (`cogolf.evaluation.build`).
"""

from __future__ import annotations

import importlib.metadata as metadata
import os
import re
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

TOOLBOX_ROOTS = ("pytest", "setuptools", "wheel")
VENV_TIMEOUT_SECONDS = 120


class EnvBuildError(RuntimeError):
    """The environment could not be built (not the submission's fault)."""


@dataclass(frozen=True)
class PythonEnv:
    root: Path
    python: Path
    toolbox: Path
    any_uid: bool  # False: the interpreter is private to root, so runs keep their uid


def world_accessible(path: Path) -> bool:
    """True when any uid may execute `path`: the file is o+rx and every parent o+x."""
    real = Path(os.path.realpath(path))
    try:
        if stat.S_IMODE(real.stat().st_mode) & 0o005 != 0o005:
            return False
        return all(stat.S_IMODE(p.stat().st_mode) & 0o001 for p in real.parents)
    except OSError:
        return False


def runner_python() -> tuple[Path, bool]:
    """An interpreter of this Python's version; the flag says whether any uid may run it.

    When none is world-accessible the caller must keep its uid (weaker walls).
    """
    own = Path(getattr(sys, "_base_executable", "") or sys.executable)
    if world_accessible(own):
        return Path(os.path.realpath(own)), True
    version = f"{sys.version_info.major}.{sys.version_info.minor}"
    for candidate in (f"/usr/bin/python{version}", f"/usr/local/bin/python{version}"):
        if world_accessible(Path(candidate)):
            return Path(os.path.realpath(candidate)), True
    return Path(os.path.realpath(own)), False


def shared_tempdir(prefix: str) -> tempfile.TemporaryDirectory[str]:
    """A temporary directory the run's uid may traverse (mkdtemp makes it 0700)."""
    tmp = tempfile.TemporaryDirectory(prefix=prefix)
    os.chmod(tmp.name, 0o755)
    return tmp


def _requirement_names(dist: metadata.Distribution) -> list[str]:
    names = []
    for req in dist.requires or []:
        if ";" in req:
            spec, marker = req.split(";", 1)
            if "extra" in marker or not _marker_holds(marker):
                continue
        else:
            spec = req
        match = re.match(r"\s*([A-Za-z0-9][A-Za-z0-9._-]*)", spec)
        if match:
            names.append(match.group(1))
    return names


def _marker_holds(marker: str) -> bool:
    from packaging.markers import Marker

    try:
        return Marker(marker).evaluate()
    except Exception:  # an odd marker in a tool's metadata: keep the dependency
        return True


def build_toolbox(dest: Path, extra: tuple[str, ...] = ()) -> Path:
    """Copy the installed distributions pytest/setuptools/wheel (and `extra`, a task's
    further needs such as playwright) need into `dest`."""
    dest.mkdir(parents=True, exist_ok=True)
    pending, done = [*TOOLBOX_ROOTS, *extra], set()
    while pending:
        name = pending.pop()
        key = re.sub(r"[-_.]+", "-", name).lower()
        if key in done:
            continue
        done.add(key)
        try:
            dist = metadata.distribution(name)
        except metadata.PackageNotFoundError as exc:
            raise EnvBuildError(f"{name} is not installed here; the toolbox needs it") from exc
        for file in dist.files or []:
            if file.parts[0] == ".." or "__pycache__" in file.parts:
                continue
            source = Path(str(dist.locate_file(file)))
            if source.is_file():
                target = dest / file
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copy2(source, target)
        pending.extend(_requirement_names(dist))
    # Interpreter-wide hooks have no business in a test environment.
    for hook in dest.glob("*.pth"):
        hook.unlink()
    return dest


def create_env(root: Path, toolbox: Path) -> PythonEnv:
    root.mkdir(parents=True, exist_ok=True)
    venv = root / "venv"
    base, any_uid = runner_python()
    done = subprocess.run([str(base), "-m", "venv", "--without-pip", str(venv)],
                          capture_output=True, timeout=VENV_TIMEOUT_SECONDS, check=False)
    if done.returncode != 0:
        raise EnvBuildError(f"venv creation failed: {done.stderr.decode(errors='replace')}")
    python = venv / "bin" / "python"
    site = subprocess.run(
        [str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
        capture_output=True, text=True, timeout=VENV_TIMEOUT_SECONDS, check=True,
    ).stdout.strip()
    Path(site, "cogolf-toolbox.pth").write_text(f"{toolbox}\n", encoding="utf-8")
    return PythonEnv(root=venv, python=python, toolbox=toolbox, any_uid=any_uid)


def pip_argv(env: PythonEnv, *args: str) -> list[str]:
    """pip of the interpreter the venv is built on, acting on `env` (runs under the walls)."""
    base, _ = runner_python()
    return [str(base), "-m", "pip", "--python", str(env.python), "--no-cache-dir",
            "--disable-pip-version-check", "--no-input", "-q", *args]


def wheel_names(wheelhouse: Path | None) -> list[Path]:
    if wheelhouse is None or not wheelhouse.is_dir():
        return []
    return sorted(p for p in wheelhouse.iterdir() if p.suffix == ".whl" and p.is_file()
                  and not p.is_symlink())
