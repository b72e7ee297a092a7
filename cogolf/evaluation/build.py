"""Building and installing an untrusted library, walled and offline.

Building runs the library's code (setuptools imports the package for a dynamic
`version = {attr = ...}`), so nothing of it runs as root or with the network:

1. the task's own dependencies, resolved into a wheelhouse when the task was
   prepared, are installed into the venv (`--no-index`: never the package index);
2. the wheel is built under the walls (leased uid, no network, rlimits, a time
   limit) from a copy that holds no tests, writing only that copy and a scratch,
   by calling the project's PEP 517 backend directly (as `pip wheel
   --no-build-isolation` would, without pip's start-up);
3. the scorer checks the wheel: only the library's own top-level names and its
   dist-info, no `.pth` file, no `.data` directory but a pure wheel's scripts (left
   uninstalled), no pytest plugin entry point but a pure wheel's (removed on unpacking);
4. the checked wheel is unpacked into the venv's site-packages by the scorer
   (pure-Python wheels; anything else is installed by pip, walled). Unpacking
   runs no code.

A failed step is the result, with a short reason; there is no second try online.
"""

from __future__ import annotations

import configparser
import os
import shutil
import zipfile
from dataclasses import dataclass
from pathlib import Path

from cogolf.evaluation.pyenv import PythonEnv, pip_argv, wheel_names
from cogolf.evaluation.walled import Walls, run_evaluator

INSTALL_SECONDS = 300.0
MAX_WHEEL_BYTES = 64 * 1024 * 1024
MAX_LOG_CHARS = 600
BUILD_MAX_PROCESSES = 16
# pip reads the system's name (user agent) and mimetypes its table, even offline
_PIP_READS = tuple(
    Path(p)
    for p in ("/etc/debian_version", "/etc/os-release", "/etc/lsb-release", "/etc/mime.types")
    if os.path.exists(p)
)


@dataclass(frozen=True)
class InstallResult:
    ok: bool
    log: str  # why it failed: the scorer's words and a capped tail of pip's output


def package_tops(package_paths: tuple[str, ...]) -> set[str]:
    """Top-level names a wheel of these package paths may hold (`src/pkg` -> `pkg`)."""
    return {Path(p).name for p in package_paths}


async def install_walled(
    env: PythonEnv, source: Path, scratch: Path, *, tops: set[str], wheelhouse: Path | None = None
) -> InstallResult:
    """Build `source` into a wheel and install it into `env`, all under the walls."""
    wheels, tmp, checked = scratch / "wheels", scratch / "tmp", scratch / "checked"
    copied = scratch / "deps"
    for d in (wheels, tmp, checked, copied):
        d.mkdir(parents=True, exist_ok=True)
        os.chmod(d, 0o755)
    # copied next to the run: the task folder may be private to root
    deps = [Path(shutil.copy(w, copied / w.name)) for w in wheel_names(wheelhouse)]
    if deps:
        failed = await _pip(
            env,
            ["install", "--no-deps", "--no-index", *map(str, deps)],
            readable=(copied,),
            writable=(env.root, tmp),
            cwd=tmp,
            what="installing the task's dependencies",
        )
        if failed:
            return InstallResult(False, failed)
    failed = await _build(env, source, wheels, tmp)
    if failed:
        return InstallResult(False, failed)
    try:
        wheel = take_wheel(wheels, checked)
        pure = check_wheel(wheel, tops)
    except WheelError as exc:
        return InstallResult(False, str(exc))
    if pure:
        unpack_wheel(wheel, site_packages(env))
        return InstallResult(True, "")
    failed = await _pip(
        env,
        ["install", "--no-deps", "--no-index", str(wheel)],
        readable=(checked,),
        writable=(env.root, tmp),
        cwd=tmp,
        what="installing the built wheel",
    )
    return InstallResult(not failed, failed)


# Calls the project's PEP 517 backend (setuptools' legacy one when none is named).
_BUILD = """
import importlib, os, sys, tomllib
source, out = sys.argv[1], sys.argv[2]
try:
    with open(os.path.join(source, "pyproject.toml"), "rb") as fh:
        system = tomllib.load(fh).get("build-system", {})
except FileNotFoundError:
    system = {}
for extra in system.get("backend-path", []):
    sys.path.insert(0, os.path.join(source, extra))
module, _, attrs = system.get("build-backend", "setuptools.build_meta:__legacy__").partition(":")
backend = importlib.import_module(module)
for attr in filter(None, attrs.split(".")):
    backend = getattr(backend, attr)
backend.build_wheel(out)
"""


async def _build(env: PythonEnv, source: Path, wheels: Path, tmp: Path) -> str:
    walls = Walls(
        readable=(source, env.root, env.toolbox),
        writable=(source, wheels, tmp),
        drop_uid=env.any_uid,
        max_processes=BUILD_MAX_PROCESSES,
        env=(("PYTHONDONTWRITEBYTECODE", "1"),),
    )
    run = await run_evaluator(
        [str(env.python), "-P", "-c", _BUILD, str(source), str(wheels)],
        cwd=source,
        walls=walls,
        wall_seconds=INSTALL_SECONDS,
    )
    if run.returncode == 0 and not run.timed_out:
        return ""
    why = run.reason or f"the build exited with code {run.returncode}"
    tail = run.stderr.decode("utf-8", "replace").strip()[-MAX_LOG_CHARS:]
    return "building the library (offline, walled) failed: " + why + (f": {tail}" if tail else "")


def site_packages(env: PythonEnv) -> Path:
    found = sorted(env.root.glob("lib/python*/site-packages"))
    if len(found) != 1:
        raise WheelError(f"the venv at {env.root} has no single site-packages")
    return found[0]


def unpack_wheel(wheel: Path, dest: Path) -> None:
    """Unpack a checked pure-Python wheel (members already vetted by `check_wheel`)."""
    with zipfile.ZipFile(wheel) as zf:
        zf.extractall(dest, [n for n in zf.namelist() if not n.split("/")[0].endswith(".data")])
        dist_info = next(n.split("/")[0] for n in zf.namelist() if ".dist-info/" in n)
    (dest / dist_info / "INSTALLER").write_text("cogolf\n", encoding="utf-8")
    _drop_pytest_plugins(dest / dist_info / "entry_points.txt")


ENTRY_POINTS = ".dist-info/entry_points.txt"


def _drop_pytest_plugins(path: Path) -> None:
    """Remove the library's own `pytest11` entry points (mimesis declares one). Runs
    load plugins only with `-p` (autoloading is off), so this is the second wall: a
    plugin of the candidate's would run its hooks before any test."""
    if not path.is_file():
        return
    parser = configparser.ConfigParser(interpolation=None)
    parser.optionxform = str  # type: ignore[assignment,method-assign]  # names keep their case
    try:
        parser.read_string(path.read_text(encoding="utf-8", errors="replace"))
    except configparser.Error:
        path.unlink()  # unreadable: nothing of it is kept
        return
    if parser.remove_section("pytest11"):
        with path.open("w", encoding="utf-8") as fh:
            parser.write(fh)


async def _pip(
    env: PythonEnv,
    args: list[str],
    *,
    readable: tuple[Path | None, ...],
    writable: tuple[Path, ...],
    cwd: Path,
    what: str,
) -> str:
    """Run pip walled; '' on success, else the reason."""
    walls = Walls(
        readable=(*(p for p in readable if p is not None), env.root, env.toolbox, *_PIP_READS),
        writable=writable,
        drop_uid=env.any_uid,
        max_processes=BUILD_MAX_PROCESSES,
        env=(("PYTHONDONTWRITEBYTECODE", "1"),),
    )
    run = await run_evaluator(
        pip_argv(env, *args), cwd=cwd, walls=walls, wall_seconds=INSTALL_SECONDS
    )
    if run.returncode == 0 and not run.timed_out:
        return ""
    why = run.reason or f"pip exited with code {run.returncode}"
    tail = run.stderr.decode("utf-8", "replace").strip()[-MAX_LOG_CHARS:]
    return f"{what} failed: {why}" + (f": {tail}" if tail else "")


class WheelError(ValueError):
    """The built wheel holds something a library's wheel must not."""


def take_wheel(wheels: Path, dest: Path) -> Path:
    """Copy the one wheel the build wrote into a folder the build cannot touch."""
    found = [p for p in wheels.iterdir()]
    if len(found) != 1 or not found[0].name.endswith(".whl"):
        raise WheelError(f"the build should write one wheel, it wrote {len(found)} file(s)")
    target = dest / found[0].name
    fd = os.open(found[0], os.O_RDONLY | os.O_NOFOLLOW)
    with os.fdopen(fd, "rb") as src:
        if os.fstat(src.fileno()).st_size > MAX_WHEEL_BYTES:
            raise WheelError(f"the built wheel is over {MAX_WHEEL_BYTES} bytes")
        with target.open("wb") as out:
            shutil.copyfileobj(src, out)
    os.chmod(target, 0o644)
    return target


def check_wheel(wheel: Path, tops: set[str]) -> bool:
    """Refuse anything but the library's own files; True for a pure-Python wheel."""
    try:
        with zipfile.ZipFile(wheel) as zf:
            infos = zf.infolist()
            if sum(i.file_size for i in infos) > MAX_WHEEL_BYTES:
                raise WheelError(f"the built wheel unpacks to over {MAX_WHEEL_BYTES} bytes")
            scripts = plugin = False
            for info in infos:
                scripts |= _is_script(info.filename)
                _check_member(info.filename, tops)
                plugin |= info.filename.endswith(ENTRY_POINTS) and b"pytest11" in zf.read(info)
            meta = next((i for i in infos if i.filename.endswith(".dist-info/WHEEL")), None)
            if meta is None:
                raise WheelError("the built wheel has no .dist-info/WHEEL")
            pure = b"root-is-purelib: true" in zf.read(meta).lower()
            # pip would install them as they are: scripts beside the venv's python, an
            # entry point that a run with plugin autoloading on would load
            if scripts and not pure:
                raise WheelError("the built wheel has compiled code and command-line scripts "
                                 "(.data/scripts): only a pure-Python wheel may carry them")
            if plugin and not pure:
                raise WheelError("the built wheel has compiled code and declares a pytest "
                                 "plugin (pytest11): only a pure-Python wheel may, and it is "
                                 "never loaded")
            return pure
    except (zipfile.BadZipFile, OSError) as exc:
        raise WheelError(f"the built wheel cannot be read: {exc}") from exc


def _is_script(name: str) -> bool:
    """A command-line script of the wheel (`NAME-VER.data/scripts/FILE`): accepted in a
    pure-Python wheel and never installed, since tests import the library, not its
    scripts. The wheel's other `.data` kinds (purelib, platlib, headers, data) would be
    installed outside site-packages, and stay refused."""
    parts = name.split("/")
    return (len(parts) >= 3 and parts[0].endswith(".data") and parts[1] == "scripts"
            and bool(parts[-1]))


def _check_member(name: str, tops: set[str]) -> None:
    parts = name.split("/")
    top = parts[0]
    if name.startswith("/") or ".." in parts or "\\" in name:
        raise WheelError(f"the built wheel has a member with an unsafe path: {name[:120]!r}")
    if name.endswith(".pth"):
        raise WheelError(f"the built wheel holds a .pth file: {name[:120]!r}")
    if top.endswith(".dist-info") or _is_script(name):
        return
    if top not in tops:
        raise WheelError(
            f"the built wheel holds {top[:120]!r}, outside the library's "
            f"package paths ({', '.join(sorted(tops))})"
        )
