"""Resolving a library's dependencies when its task is prepared, never at scoring.

Build requirements the toolbox lacks (hatchling, flit-core, ...) and runtime
requirements (`Requires-Dist` of the original's wheel) are downloaded as wheels
only (`--only-binary :all:`: nothing is built, so no downloaded code runs here)
into the task's wheelhouse. Scoring installs from it with `--no-index`.
"""

from __future__ import annotations

import re
import subprocess
import sys
import tomllib
import zipfile
from email.parser import HeaderParser
from pathlib import Path

from packaging.markers import Marker
from packaging.requirements import InvalidRequirement, Requirement

from cogolf.evaluation.pyenv import TOOLBOX_ROOTS
from cogolf.games.commit0.layout import SourceError

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


def resolve_runtime_requirements(checked: Path, wheelhouse: Path) -> list[str]:
    """Download the runtime requirements of the one wheel in `checked`; returns them."""
    wheels = sorted(checked.glob("*.whl"))
    if len(wheels) != 1:
        return []
    with zipfile.ZipFile(wheels[0]) as zf:
        meta = next((n for n in zf.namelist() if n.endswith(".dist-info/METADATA")), None)
        text = zf.read(meta).decode("utf-8", "replace") if meta else ""
    needed = []
    for line in HeaderParser().parsestr(text).get_all("Requires-Dist") or []:
        try:
            req = Requirement(line)
        except InvalidRequirement:
            continue
        if req.marker is not None and not _holds(req.marker):
            continue
        needed.append(str(req))
    download(needed, wheelhouse)
    return needed


def _holds(marker: Marker) -> bool:
    try:
        return marker.evaluate({"extra": ""})
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
            sys.executable,
            "-m",
            "pip",
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
    if done.returncode != 0:
        tail = done.stderr.decode("utf-8", "replace").strip().splitlines()[-3:]
        raise SourceError(
            f"could not resolve {', '.join(requirements)} into wheels: {' / '.join(tail)}"
        )
