"""A project task as a coding agent plays it: the template as the workspace, the task's
prompt, and the workspace's diff scored by `run_attempt` (the template copied fresh,
the patch applied, the evaluator's pristine tests put in place of anything there)."""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.games.project.attempt import run_attempt
from cogolf.games.project.results import AttemptResult
from cogolf.games.project.scoring import AttemptStatus, score_attempt
from cogolf.games.project.task import ProjectTask, TaskError, load_task

SOLUTION_DIR = "solution"  # beside task.json: the reference's files, as an overlay
MAX_REFERENCE_BYTES = 8 << 20


def lint_hint(template: Path) -> str:
    """The checks a workspace of this kind can run inside the walls."""
    names = {p.suffix for p in template.rglob("*") if p.is_file()}
    hints = []
    if ".py" in names:
        hints.append("`ruff check .` and `python -m pytest` (if you write tests)")
    if (template / "go.mod").is_file():
        hints.append("`go build ./...`, `go vet ./...` and `go test ./...`")
    if ".php" in names:
        hints.append("`php -l FILE` (and `phpunit` where the project has tests)")
    if ".js" in names:
        hints.append("reading your JavaScript carefully (no browser is available)")
    return "; ".join(hints) or "the tools of the system"


@dataclass(frozen=True)
class ProjectAgentTask:
    task: ProjectTask
    game: str = "project"

    @property
    def name(self) -> str:
        return self.task.name

    def workspace(self, dest: Path) -> None:
        assert self.task.template is not None
        shutil.copytree(self.task.template, dest, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc"))

    def prompt(self) -> str:
        text = (self.task.prompt.read_text(encoding="utf-8") if self.task.prompt is not None
                else f"Complete the project task {self.task.name} in this workspace.")
        assert self.task.template is not None
        return (f"{text.rstrip()}\n\n## Feedback\n\nHidden evaluator tests score your work "
                "after you finish; they are not in the workspace. You may check your work "
                f"with {lint_hint(self.task.template)}.\n")

    def reference(self) -> dict[str, bytes]:
        folder = self.task.root / SOLUTION_DIR
        out: dict[str, bytes] = {}
        if folder.is_dir():
            for path in sorted(folder.rglob("*")):
                if path.is_file() and not path.is_symlink():
                    out[str(path.relative_to(folder))] = path.read_bytes()
        if sum(len(v) for v in out.values()) > MAX_REFERENCE_BYTES:
            raise TaskError(f"{folder}: the reference is over {MAX_REFERENCE_BYTES} bytes")
        return out

    async def score(self, patch: Path, *, entrant: str, attempt: int) -> dict[str, Any]:
        result = await run_attempt(self.task, patch, entrant=entrant, attempt=attempt)
        return result.to_json()

    def unscored(self, notes: list[str], *, entrant: str, attempt: int) -> dict[str, Any]:
        score = score_attempt(self.task, AttemptStatus.BAD_CHANGES, None, notes)
        return AttemptResult(task=self.task.name, entrant=entrant, attempt=attempt,
                             scale=self.task.scale.name, score=score, seconds=0.0,
                             walled=None).to_json()

    def points(self, doc: dict[str, Any]) -> float:
        return float(doc["points"])

    def result_name(self, entrant: str, attempt: int) -> str:
        return f"{entrant}.{self.task.name}.{attempt}.json"


def agent_task(path: Path) -> ProjectAgentTask:
    task = load_task(path)
    if not task.runnable:
        raise TaskError(f"task {task.name} has no template, evaluator or command: an agent "
                        "cannot play it here")
    return ProjectAgentTask(task)
