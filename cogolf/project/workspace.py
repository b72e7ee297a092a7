"""Building an attempt's workspace: a fresh copy of the template with the
entrant's changes applied, then the evaluator's tests copied in.

Changes are an overlay directory (its files replace or add to the template's)
or a unified diff applied with `git apply`, which refuses paths that leave the
workspace. Symlinks and special files in an overlay are refused: they could
point the evaluator at files outside the workspace.
"""

from __future__ import annotations

import filecmp
import os
import shutil
import stat
import subprocess
from pathlib import Path

MAX_OVERLAY_FILES = 5000
MAX_OVERLAY_BYTES = 64 * 1024 * 1024
PATCH_TIMEOUT_SECONDS = 60


class ChangesError(ValueError):
    """The entrant's changes cannot be applied; the message says which file and why."""


def build_workspace(template: Path, changes: Path, workspace: Path) -> None:
    shutil.copytree(template, workspace, symlinks=True)
    if changes.is_dir():
        apply_overlay(changes, workspace)
    elif changes.is_file():
        apply_patch(changes, workspace)
    else:
        raise ChangesError(f"{changes}: neither a directory nor a patch file")


def apply_overlay(overlay: Path, workspace: Path) -> None:
    count = total = 0
    for dirpath, dirnames, filenames in os.walk(overlay):
        here = Path(dirpath)
        dirnames[:] = [d for d in dirnames if d not in (".git", "__pycache__")]
        for name in [*dirnames, *filenames]:
            mode = os.lstat(here / name).st_mode
            rel = (here / name).relative_to(overlay)
            if stat.S_ISLNK(mode):
                raise ChangesError(f"overlay {rel}: symbolic links are not allowed")
            if not (stat.S_ISDIR(mode) or stat.S_ISREG(mode)):
                raise ChangesError(f"overlay {rel}: only regular files and directories are allowed")
        for name in filenames:
            source = here / name
            rel = source.relative_to(overlay)
            count += 1
            total += source.stat().st_size
            if count > MAX_OVERLAY_FILES:
                raise ChangesError(f"overlay has more than {MAX_OVERLAY_FILES} files")
            if total > MAX_OVERLAY_BYTES:
                raise ChangesError(f"overlay is larger than {MAX_OVERLAY_BYTES} bytes")
            target = workspace / rel
            if target.is_symlink() or (target.exists() and not target.is_file()):
                raise ChangesError(f"overlay {rel}: would replace a non-file in the template")
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.copyfile(source, target)


def apply_patch(patch: Path, workspace: Path) -> None:
    if patch.stat().st_size > MAX_OVERLAY_BYTES:
        raise ChangesError(f"patch {patch.name} is larger than {MAX_OVERLAY_BYTES} bytes")
    if not patch.read_bytes().strip():
        return  # an empty patch is no change; the caller notices
    try:
        done = subprocess.run(
            ["git", "apply", "--whitespace=nowarn", str(patch.resolve())],
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
