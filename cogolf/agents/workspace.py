"""An attempt's workspace: fresh from the task's template, and its snapshot as a patch.

The workspace is new files with `git init` and one commit (no history of anything
else, no remote), so an agent can use git the way it would in any checkout. The
snapshot never trusts what the agent left: the workspace's own `.git` is ignored
(hooks, config and a forged history would otherwise run or count), its files are
copied out without following links (a link anywhere makes the patch bad: it could
point the scorer at any file), size-capped, and diffed against the template in a
repository of the harness's own. The patch holds binary files, deletions, renames
and mode changes.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from cogolf import safeio

MAX_FILES = 20_000
MAX_BYTES = 256 << 20  # the workspace's files, copied out for the diff
MAX_PATCH_BYTES = 32 << 20
GIT_TIMEOUT = 120
IDENTITY = ("-c", "user.name=cogolf", "-c", "user.email=cogolf@localhost",
            "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
            "-c", "commit.gpgsign=false", "-c", "init.defaultBranch=main")


class BadPatch(ValueError):
    """The workspace cannot become a submission; the message says which file and why."""


def git(args: list[str], cwd: Path, *, data: bytes | None = None,
        git_dir: Path | None = None) -> bytes:
    """Run git as the harness: no system or user config, no hooks, no pager."""
    env = {"PATH": "/usr/bin:/bin", "HOME": str(cwd), "GIT_CONFIG_NOSYSTEM": "1",
           "GIT_CONFIG_GLOBAL": "/dev/null", "GIT_TERMINAL_PROMPT": "0", "LANG": "C"}
    if git_dir is not None:
        env |= {"GIT_DIR": str(git_dir), "GIT_WORK_TREE": str(cwd)}
    done = subprocess.run(["git", *IDENTITY, *args], cwd=cwd, input=data, capture_output=True,
                          timeout=GIT_TIMEOUT, env=env, check=False)
    if done.returncode != 0:
        detail = done.stderr.decode("utf-8", "replace").strip().splitlines()
        raise RuntimeError(f"git {args[0]} failed: {' / '.join(detail[:3])}")
    return done.stdout


def init_repo(tree: Path, git_dir: Path | None = None) -> None:
    """`git init` and one commit of everything in `tree`."""
    git(["init", "-q", *([] if git_dir is None else [f"--separate-git-dir={git_dir}"])], tree)
    if git_dir is not None:
        (tree / ".git").unlink()  # the harness's repository is never inside the tree
    git(["add", "-A", "-f"], tree, git_dir=git_dir)
    git(["commit", "-q", "--allow-empty", "-m", "the task's template"], tree, git_dir=git_dir)


def fresh(template: Path, workspace: Path) -> None:
    """The template as new files, committed once in a repository of its own."""
    shutil.copytree(template, workspace, symlinks=True,
                    ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc"))
    init_repo(workspace)


def snapshot(workspace: Path, template: Path, patch: Path, *, max_bytes: int = MAX_BYTES,
             max_patch_bytes: int = MAX_PATCH_BYTES) -> int:
    """Write the diff from the template to the workspace as it is now; its size in bytes
    (0: no change). BadPatch when the workspace cannot be a submission."""
    with tempfile.TemporaryDirectory(prefix="cogolf-snapshot-") as tmp:
        root = Path(tmp)
        tree, repo = root / "tree", root / "repo.git"
        shutil.copytree(template, tree, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc"))
        init_repo(tree, repo)
        for entry in list(tree.iterdir()):
            if entry.is_dir() and not entry.is_symlink():
                shutil.rmtree(entry)
            else:
                entry.unlink()
        try:
            safeio.copy_tree(workspace, tree, max_files=MAX_FILES, max_bytes=max_bytes,
                             label="workspace", ignore=lambda name: name in (".git",
                                                                             "__pycache__"))
        except safeio.UnsafeFile as exc:
            raise BadPatch(str(exc)) from None
        except OSError as exc:
            raise BadPatch(f"workspace: cannot read ({exc.strerror})") from None
        _copy_modes(workspace, tree)
        git(["add", "-A", "-f"], tree, git_dir=repo)
        diff = git(["diff", "--cached", "--binary", "--full-index", "-M", "--no-color",
                    "--no-ext-diff", "--no-textconv"], tree, git_dir=repo)
    if len(diff) > max_patch_bytes:
        raise BadPatch(f"the patch is {len(diff)} bytes; the cap is {max_patch_bytes}")
    fd = os.open(patch, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_NOFOLLOW, 0o644)
    with os.fdopen(fd, "wb") as f:
        f.write(diff)
    return len(diff)


def _copy_modes(src: Path, dst: Path) -> None:
    """The executable bit of every copied file, as the agent left it."""
    for dirpath, _dirs, files in os.walk(dst):
        for name in files:
            target = Path(dirpath) / name
            try:
                mode = os.lstat(src / target.relative_to(dst)).st_mode
            except OSError:
                continue
            os.chmod(target, 0o755 if mode & 0o111 else 0o644)


def apply(patch: Path, tree: Path) -> None:
    """Apply a snapshot's patch to a clean copy (git apply refuses paths leaving it)."""
    if patch.stat().st_size == 0:
        return
    try:
        git(["apply", "--whitespace=nowarn", "--binary", str(patch)], tree)
    except RuntimeError as exc:
        raise BadPatch(f"the patch does not apply: {exc}") from None
