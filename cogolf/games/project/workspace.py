"""Building an attempt's workspace: a fresh copy of the template with the
entrant's changes applied, then the evaluator's tests copied in.

Changes are an overlay directory (its files replace or add to the template's)
or a unified diff applied with `git apply`, which refuses paths that leave the
workspace. No link is followed in the changes: a symbolic link (the changes
themselves, or anything in an overlay) or a special file is refused with its
path, since it could point the evaluator at files outside the workspace, and
sizes are checked before anything is read.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import stat
import subprocess
import tempfile
from pathlib import Path

from cogolf import safeio

MAX_OVERLAY_FILES = 5000
MAX_OVERLAY_BYTES = 64 * 1024 * 1024
PATCH_TIMEOUT_SECONDS = 60


class ChangesError(ValueError):
    """The entrant's changes cannot be applied; the message says which file and why."""


def build_workspace(template: Path, changes: Path, workspace: Path) -> None:
    shutil.copytree(template, workspace, symlinks=True)
    try:
        mode = os.lstat(changes).st_mode
    except OSError as exc:
        raise ChangesError(f"{changes}: cannot read ({exc.strerror})") from exc
    if stat.S_ISLNK(mode):
        raise ChangesError(f"{changes}: a symbolic link; symbolic links are never followed")
    if stat.S_ISDIR(mode):
        apply_overlay(changes, workspace)
    elif stat.S_ISREG(mode):
        apply_patch(changes, workspace)
    else:
        raise ChangesError(f"{changes}: neither a directory nor a patch file")


def apply_overlay(overlay: Path, workspace: Path) -> None:
    """Copy the overlay in (no link followed, sizes capped), then lay it over the template."""
    with tempfile.TemporaryDirectory(prefix="cogolf-overlay-") as tmp:
        staged = Path(tmp) / "overlay"
        try:
            safeio.copy_tree(overlay, staged, max_files=MAX_OVERLAY_FILES,
                             max_bytes=MAX_OVERLAY_BYTES, label="overlay",
                             ignore=lambda name: name in (".git", "__pycache__"))
        except safeio.UnsafeFile as exc:
            raise ChangesError(str(exc)) from exc
        except OSError as exc:
            raise ChangesError(f"overlay: cannot read ({exc.strerror})") from exc
        for dirpath, _dirnames, filenames in os.walk(staged):
            for name in filenames:
                source = Path(dirpath) / name
                rel = source.relative_to(staged)
                target = workspace / rel
                if target.is_symlink() or (target.exists() and not target.is_file()):
                    raise ChangesError(f"overlay {rel}: would replace a non-file in the template")
                target.parent.mkdir(parents=True, exist_ok=True)
                shutil.copyfile(source, target)


def apply_patch(patch: Path, workspace: Path) -> None:
    try:
        data = safeio.read_file(patch, MAX_OVERLAY_BYTES)
    except safeio.UnsafeFile as exc:
        raise ChangesError(f"patch {exc}") from exc
    except OSError as exc:
        raise ChangesError(f"patch {patch.name}: cannot read ({exc.strerror})") from exc
    if not data.strip():
        return  # an empty patch is no change; the caller notices
    try:
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", "-"],
            input=data,
            cwd=workspace,
            capture_output=True,
            timeout=PATCH_TIMEOUT_SECONDS,
            check=False,
            env={"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "GIT_CONFIG_NOSYSTEM": "1",
                 "HOME": str(workspace)},
        )
    except (OSError, subprocess.TimeoutExpired) as exc:
        raise ChangesError(f"patch {patch.name}: git apply could not run: {exc}") from exc
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise ChangesError(f"patch {patch.name} does not apply: {' / '.join(detail[:3])}")


def same_tree(a: Path, b: Path) -> bool:
    """True when both trees hold the same files with the same bytes."""
    cmp = filecmp.dircmp(a, b, ignore=[])
    return _same(cmp)


def _same(cmp: filecmp.dircmp[str]) -> bool:
    if cmp.left_only or cmp.right_only or cmp.funny_files:
        return False
    _, mismatch, errors = filecmp.cmpfiles(cmp.left, cmp.right, cmp.common_files, shallow=False)
    if mismatch or errors:
        return False
    return all(_same(sub) for sub in cmp.subdirs.values())


def install_evaluator(tests: Path, workspace: Path, dest: str) -> Path:
    """Copy the evaluator's tests in, replacing whatever the changes put there."""
    target = workspace / dest
    if target.is_symlink() or target.is_file():
        target.unlink()
    elif target.exists():
        shutil.rmtree(target)
    shutil.copytree(tests, target, symlinks=False)
    return target
