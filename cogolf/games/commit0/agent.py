"""A Commit-0 task as a coding agent plays it: the skeleton as the workspace (with the
suite beside it when the feedback is `tests`, as the benchmark's own runner does), and
the workspace's diff applied to a clean copy of that start, then scored by
`score_submission`, which takes only the library's files and puts the pristine hidden
tests back.

Feedback: `none` (the prompt names no check), `lint` (ruff), `tests` (the suite is in
the workspace and pytest runs it). The reference library is never installed where the
agent runs; the oracle's files come from the task's source when it is a local tree.
"""

from __future__ import annotations

import shutil
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from cogolf.agents.workspace import apply
from cogolf.evaluation.pyenv import shared_tempdir
from cogolf.games.commit0.layout import library_files
from cogolf.games.commit0.results import Commit0Result
from cogolf.games.commit0.score import score_submission
from cogolf.games.commit0.task import Commit0Task, load_task

FEEDBACK = ("none", "lint", "tests")


@dataclass(frozen=True)
class Commit0AgentTask:
    task: Commit0Task
    feedback: str = "lint"
    quality: bool = True
    game: str = "commit0"

    @property
    def name(self) -> str:
        return self.task.name

    def workspace(self, dest: Path) -> None:
        shutil.copytree(self.task.skeleton, dest, symlinks=True,
                        ignore=shutil.ignore_patterns(".git", "__pycache__", "*.pyc"))
        if self.feedback == "tests":
            for unit in self.task.tests_paths:
                hidden, target = self.task.hidden_tests / unit, dest / unit
                target.parent.mkdir(parents=True, exist_ok=True)
                if hidden.is_dir():
                    shutil.copytree(hidden, target, dirs_exist_ok=True)
                else:
                    shutil.copy2(hidden, target)

    def prompt(self) -> str:
        stubbed = sum(len(v) for v in self.task.stubbed.values())
        paths = ", ".join(self.task.package_paths)
        tests = ", ".join(self.task.tests_paths)
        feedback = {
            "none": "No checks are offered: read the docstrings and write the code.",
            "lint": "You may run `ruff check .` on your code. The tests are not in the "
                    "workspace.",
            "tests": f"The library's test suite is in the workspace ({tests}): run it "
                     "with `python -m pytest` (put the library on PYTHONPATH, e.g. "
                     "`PYTHONPATH=src` for a src layout). Scoring reruns the pristine suite; "
                     "editing the tests changes nothing.",
        }[self.feedback]
        return (
            f"# Implement the library `{self.task.name}`\n\n"
            f"This workspace is the library with {stubbed} function and method bodies "
            "replaced by `raise NotImplementedError` (signatures and docstrings kept). "
            f"Implement them all, in {paths}. Keep every public name and signature.\n\n"
            "## Feedback\n\n"
            f"{feedback} Only the files under {paths} are scored, by the library's hidden "
            "test suite run from a clean checkout: the pass rate is the share of its "
            "tests that pass.\n")

    def reference(self) -> dict[str, bytes]:
        source = Path(self.task.source)
        if not source.is_dir():
            return {}
        return {str(rel): (source / rel).read_bytes()
                for rel in library_files(source, self.task.package_paths, self.task.tests_paths)}

    async def score(self, patch: Path, *, entrant: str, attempt: int) -> dict[str, Any]:
        with shared_tempdir("cogolf-commit0-agent-") as tmp:
            tree = Path(tmp) / "submission"
            self.workspace(tree)
            apply(patch, tree)
            result = await score_submission(self.task, tree, entrant=entrant,
                                            quality=self.quality)
        return result.to_json()

    def unscored(self, notes: list[str], *, entrant: str, attempt: int) -> dict[str, Any]:
        return Commit0Result(task=self.task.name, entrant=entrant, status="bad_submission",
                             passed=0, total=len(self.task.reference_ids),
                             notes=notes).to_json()

    def points(self, doc: dict[str, Any]) -> float:
        return float(doc["pass_rate"])

    def result_name(self, entrant: str, attempt: int) -> str:
        return f"{entrant}.{self.task.name}.json" if attempt == 0 else \
            f"{entrant}.{self.task.name}.{attempt}.json"


def agent_task(path: Path, feedback: str = "lint", quality: bool = True) -> Commit0AgentTask:
    return Commit0AgentTask(load_task(path), feedback, quality)
