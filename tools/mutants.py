"""Mutation testing of the trust-critical modules (`make mutants`).

A mistake in these modules becomes a wrong score, a forged replay that verifies or a
leak, so their tests must fail when the code is changed in small ways. mutmut makes
each small change (a mutant) and runs the tests that reach it; a mutant that no test
fails on is a survivor. Each module runs on its own, with only the tests that
cover it (tools/mutants.toml), in a copy of the tree under .mutants/, so one module
takes minutes and the worktree is never changed. The numbers, the survivors and why
each remaining one is equivalent go to MUTANTS.md, between its markers.

Usage: tools/mutants.py [MODULE_PATH ...]   (default: every module, in order)
       tools/mutants.py --report            (rewrite MUTANTS.md from the last runs)
       tools/mutants.py --results MODULE    (the last run's survivors against today's tests)
       tools/mutants.py --results-only MODULE  (the last run's verdicts, not rechecked)
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tomllib
from dataclasses import dataclass
from fnmatch import fnmatch
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
CONFIG = ROOT / "tools" / "mutants.toml"
WORK = ROOT / ".mutants"
# Each module's last result (its count and its survivors' changes), kept in the repository
# so that the report can be rebuilt from it and one module can be run again alone.
RESULTS = ROOT / "tools" / "mutants-results"
REPORT = ROOT / "MUTANTS.md"
BEGIN, END = "<!-- mutants:begin -->", "<!-- mutants:end -->"
GOAL = 0.90
RECHECK_SECONDS = 900
# CI=1: the stacks' tests run rather than skip; a failing property is not shrunk.
ENV = {"CI": "1", "COGOLF_HYPOTHESIS_PROFILE": "mutants"}
# mutmut's exit codes per mutant (mutmut.stats.status_by_exit_code).
KILLED = {1, 3, -24, 24, 36, 152, 255, -9, -11}  # failed, crashed or timed out
SURVIVED = {0}


@dataclass(frozen=True)
class Module:
    path: str
    tests: list[str]
    equivalent: dict[str, str]
    args: list[str]  # more pytest arguments, e.g. -k to leave out tests of subprocesses
    only: list[str]  # mutant name globs, where a module's run is limited to its checks

    @property
    def slug(self) -> str:
        return self.path.removesuffix(".py").replace("/", ".")


def load_modules() -> list[Module]:
    data = tomllib.loads(CONFIG.read_text())
    return [
        Module(
            m["path"],
            list(m["tests"]),
            dict(m.get("equivalent", {})),
            list(m.get("args", [])),
            list(m.get("only", [])),
        )
        for m in data["module"]
    ]


def _mutmut_section(module: Module, top: list[str]) -> str:
    # The module globs select files under cogolf/ to mutate; the rest is copied as is.
    only = [module.path] if module.path.endswith(".py") else [module.path.rstrip("/") + "/*.py"]
    lines = [
        "",
        "[tool.mutmut]",
        'source_paths = ["cogolf"]',
        f"only_mutate = {json.dumps(only)}",
        f"also_copy = {json.dumps(top)}",
        f"pytest_add_cli_args_test_selection = {json.dumps([*module.tests, *module.args])}",
        'pytest_add_cli_args = ["-p", "no:cacheprovider", "-q", "-x"]',
        "use_git_change_detection = false",
        "",
    ]
    return "\n".join(lines)


def prepare(module: Module) -> Path:
    """A fresh copy of the tracked tree, with mutmut's settings for this module."""
    work = WORK / module.slug
    shutil.rmtree(work, ignore_errors=True)
    work.mkdir(parents=True)
    files = subprocess.run(
        ["git", "ls-files", "-z", "--cached", "--others", "--exclude-standard"],
        cwd=ROOT, check=True, capture_output=True,
    ).stdout.split(b"\0")
    top: set[str] = set()
    for raw in filter(None, files):
        rel = raw.decode()
        src = ROOT / rel
        if not src.is_file() or rel.startswith(".mutants/"):
            continue
        dest = work / rel
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copy2(src, dest)
        head = rel.split("/", 1)[0]
        if head not in {"cogolf", "tests", "pyproject.toml"}:
            top.add(head)
    pyproject = work / "pyproject.toml"
    pyproject.write_text(pyproject.read_text() + _mutmut_section(module, sorted(top)))
    return work


def run(module: Module) -> int:
    work = prepare(module)
    mutmut = Path(sys.executable).with_name("mutmut")
    env = {**os.environ, **ENV}
    log = WORK / f"{module.slug}.log"
    print(f"== {module.path}: mutmut in {work.relative_to(ROOT)}, log {log.relative_to(ROOT)}")
    # One worker, at low priority: the machine is shared and the tests have walls of their own.
    with log.open("w") as out:
        proc = subprocess.run(
            ["nice", "-n", "15", str(mutmut), "run", "--max-children", "1", *module.only],
            cwd=work, env=env, stdout=out, stderr=subprocess.STDOUT,
        )
    if proc.returncode != 0:
        print(log.read_text(errors="replace")[-3000:], file=sys.stderr)
        return proc.returncode
    save_results(module, work)
    return 0


def _exit_codes(module: Module, work: Path) -> dict[str, int | None]:
    codes: dict[str, int | None] = {}
    for meta in (work / "mutants").rglob("*.meta"):
        codes.update(json.loads(meta.read_text()).get("exit_code_by_key", {}))
    if module.only:
        codes = {k: c for k, c in codes.items() if any(fnmatch(k, g) for g in module.only)}
    return codes


def _selection(module: Module, work: Path, mutant: str) -> int:
    """The exit code of the module's whole test selection with `mutant` active ("": none)."""
    env = {**os.environ, **ENV, "MUTANT_UNDER_TEST": mutant}
    args = [sys.executable, "-m", "pytest", "-x", "-q", "-p", "no:cacheprovider", *module.tests]
    try:
        return subprocess.run(
            ["nice", "-n", "15", *args], cwd=work / "mutants", env=env,
            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL, timeout=RECHECK_SECONDS,
        ).returncode
    except subprocess.TimeoutExpired:
        return -1


def recheck(module: Module, work: Path, name: str) -> bool:
    """Whether the module's whole test selection fails with mutant `name` active.

    mutmut runs a mutant against the tests that called its function while it gathered
    its statistics. A function called once per session (a fixture's, say) is credited
    to the first test only, and one reached only in a subprocess to none; so a survivor
    is run once more against every selected test, in the copy's tree (a subprocess run
    from there imports it too) with the mutant named as mutmut names it.
    """
    # failed (1), or could not even be collected (2: the mutant broke an import), or timed
    # out (-1: a mutant that makes the tests hang is caught by their timeouts in CI)
    return _selection(module, work, name) in (1, 2, -1)


def save_results(module: Module, work: Path, *, rechecked: bool = True) -> None:
    codes = _exit_codes(module, work)
    # A run stopped early leaves mutants unchecked: they are counted apart, not as survivors.
    unchecked = sum(1 for c in codes.values() if c is None)
    codes = {k: c for k, c in codes.items() if c is not None}
    survivors = sorted(k for k, c in codes.items() if c not in KILLED)
    print(f"   {len(survivors)} not killed by mutmut")
    if rechecked:
        print("   each runs once more against every test")
        if survivors and (code := _selection(module, work, "")) != 0:
            raise SystemExit(f"{module.path}: its tests fail without a mutant (exit {code})")
        survivors = [
            n for n in survivors if n in module.equivalent or not recheck(module, work, n)
        ]
    changes = {}
    mutmut = Path(sys.executable).with_name("mutmut")
    for name in survivors:
        shown = subprocess.run(
            [str(mutmut), "show", name], cwd=work, capture_output=True, text=True
        ).stdout.splitlines()
        changed = [
            line for line in shown if line[:1] in "+-" and line[:3] not in {"+++", "---"}
        ]
        changes[name] = {"exit_code": codes[name], "change": changed}
    RESULTS.mkdir(exist_ok=True)
    out = RESULTS / f"{module.slug}.json"
    doc = {"total": len(codes), "unchecked": unchecked, "rechecked": rechecked,
           "survivors": changes}
    out.write_text(json.dumps(doc, indent=1) + "\n")
    print(f"   {len(codes)} mutants, {len(survivors)} not killed: {out.relative_to(ROOT)}")


def _row(module: Module) -> tuple[str, list[str], bool]:
    res_path = RESULTS / f"{module.slug}.json"
    if not res_path.exists():
        return f"| {module.path} | not run | | | | |", [], False
    res = json.loads(res_path.read_text())
    total, survivors = res["total"], res["survivors"]
    equivalent = [n for n in survivors if n in module.equivalent]
    live = [n for n in survivors if n not in module.equivalent]
    tested = total - len(equivalent)
    score = (tested - len(live)) / tested if tested else 1.0
    ok = score >= GOAL
    where = module.path
    if module.only:  # the functions a limited run covers
        where += " (" + ", ".join(g.rsplit(".", 1)[-1] for g in module.only) + ")"
    if not res.get("rechecked", True):
        where += " (survivors not rechecked)"
    if res.get("unchecked"):
        where += f" (stopped early: {res['unchecked']} more not run)"
    row = (
        f"| {where} | {total} | {total - len(survivors)} | {len(equivalent)} "
        f"| {len(live)} | {score:.0%}{'' if ok else ' (below goal)'} |"
    )
    def note(name: str, why: str) -> str:
        change = " → ".join(f"`{line[1:].strip()}`" for line in survivors[name]["change"])
        return f"- {name.rsplit('.', 1)[-1]}: {change}: {why}"

    notes = [note(n, module.equivalent[n]) for n in equivalent]
    notes += [note(n, "**not killed yet**") for n in live]
    return row, notes, ok


def report(modules: list[Module]) -> bool:
    table = [
        "| module | mutants | killed | equivalent | survivors | killed of non-equivalent |",
        "| --- | ---: | ---: | ---: | ---: | ---: |",
    ]
    details: list[str] = []
    all_ok = True
    for m in modules:
        row, notes, ok = _row(m)
        table.append(row)
        all_ok &= ok
        if notes:
            details += ["", f"### {m.path}", "", *notes]
    body = "\n".join([BEGIN, *table, *details, END])
    text = REPORT.read_text()
    start, end = text.index(BEGIN), text.index(END) + len(END)
    REPORT.write_text(text[:start] + body + text[end:])
    return all_ok


def main(argv: list[str]) -> int:
    modules = load_modules()
    if argv[:1] == ["--report"]:
        return 0 if report(modules) else 1
    if argv[:1] in (["--results"], ["--results-only"]):
        # The last run's survivors against today's tests (new tests are copied in first),
        # without running mutmut again; --results-only takes mutmut's verdicts as they are
        # (for a run stopped early whose rechecks would take too long).
        for m in modules:
            if m.path in argv[1:]:
                work = WORK / m.slug
                shutil.copytree(ROOT / "tests", work / "mutants" / "tests", dirs_exist_ok=True)
                save_results(m, work, rechecked=argv[0] == "--results")
        return 0 if report(modules) else 1
    chosen = [m for m in modules if not argv or m.path in argv]
    unknown = set(argv) - {m.path for m in modules}
    if unknown:
        print(f"not in {CONFIG.relative_to(ROOT)}: {', '.join(sorted(unknown))}", file=sys.stderr)
        return 2
    failed = [m.path for m in chosen if run(m) != 0]
    ok = report(modules)
    if failed:
        print(f"mutmut failed on: {', '.join(failed)}", file=sys.stderr)
        return 1
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
