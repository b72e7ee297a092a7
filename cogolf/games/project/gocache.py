"""A warm Go build cache for Go evaluators.

`go test -race` in an empty GOCACHE first compiles the standard library with the
race detector, which takes a minute or more on a small machine and would dominate
every attempt. So the cache is warmed once per machine by trusted code only (the
task's own template and evaluator, compiled with `go test -c`, never run), kept
in a folder of this user's, and each attempt starts from its own copy: what a
candidate's run writes into its copy never reaches another attempt.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import tempfile
from pathlib import Path

import structlog

from cogolf.games.project.task import ProjectTask

log = structlog.get_logger(__name__)

WARM_TIMEOUT_SECONDS = 900
CACHE_NAME = "go-cache"
"""The folder name under the run's TMPDIR that a Go task's command uses as GOCACHE."""

GO_ENV = {
    "GOFLAGS": "-mod=mod",
    "GOPROXY": "off",
    "GOSUMDB": "off",
    "GOENV": "off",
    "GOWORK": "off",
    "GOTOOLCHAIN": "local",
    "CGO_ENABLED": "1",
}


def is_go_task(task: ProjectTask) -> bool:
    return task.report_format == "go-test-json" and shutil.which("go") is not None


def cache_root() -> Path:
    base = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(base) / "cogolf" / "go-build"


def warm_cache(task: ProjectTask) -> Path | None:
    """The machine's warm cache, built now if missing; None if it cannot be built
    (the attempt then starts cold, slower but scored the same)."""
    root = cache_root()
    if root.is_dir():
        return root
    assert task.template is not None and task.evaluator_tests is not None
    root.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(prefix="cogolf-gowarm-") as tmp:
        work, cache = Path(tmp) / "module", Path(tmp) / "cache"
        shutil.copytree(task.template, work)
        shutil.copytree(task.evaluator_tests, work / task.evaluator_dest)
        env = {"PATH": "/usr/local/bin:/usr/bin:/bin", "HOME": tmp, "GOCACHE": str(cache),
               "GOPATH": str(Path(tmp) / "gopath"), "GOTMPDIR": tmp, **GO_ENV}
        argv = ["go", "test", "-race", "-c", "-o", os.devnull, f"./{task.evaluator_dest}"]
        try:
            done = subprocess.run(argv, cwd=work, env=env, capture_output=True,
                                  timeout=WARM_TIMEOUT_SECONDS, check=False)
        except (OSError, subprocess.TimeoutExpired) as exc:
            log.warning("go_cache_warm_failed", error=str(exc))
            return None
        if done.returncode != 0:
            tail = done.stderr[-500:].decode("utf-8", "replace")
            log.warning("go_cache_warm_failed", output=tail)
            return None
        try:
            # built aside, then renamed: a concurrent warm-up never sees half a cache
            os.rename(cache, root)
        except OSError:
            if not root.is_dir():
                return None
    return root


def seed_cache(task: ProjectTask, tmpdir: Path) -> None:
    """Give the run a copy of the warm cache as `$TMPDIR/go-cache`, if there is one."""
    warm = warm_cache(task)
    if warm is not None:
        shutil.copytree(warm, tmpdir / CACHE_NAME, symlinks=True)
