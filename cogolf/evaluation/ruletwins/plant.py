"""Planting a run's twins in the copied evaluator, and reading its report back.

Per run, from a fresh secret, `plant` picks `count` of the evaluator's tests that
the task scores and that have a twin by the rule, and for each writes a twin
beside it: a copy (leading comments included) with one expected value changed or
one check inverted. The original is renamed too, so neither copy carries the
test's real name (which a candidate can learn from the check ids of its earlier
results), and which of the two comes first is drawn. Names are made of the
file's own test-name words.

`judge` reads the report in this run's names: a twin reported passed together
with its original, or a test reported under a real name this run renamed (no
honest run can report a test it does not have), is forgery; the report handed on
is in the task's test ids, without twins.
"""

from __future__ import annotations

import random
import re
from collections.abc import Callable, Iterable
from dataclasses import dataclass, field
from pathlib import Path

from cogolf.evaluation.reports import Outcome, TestReport
from cogolf.evaluation.ruletwins import go, php
from cogolf.evaluation.ruletwins.lexer import LexError
from cogolf.evaluation.ruletwins.model import Edit, SourceFile, Unit
from cogolf.evaluation.ruletwins.variants import fresh_name
from cogolf.evaluation.twins import contradictions, without_twins


@dataclass(frozen=True)
class Rule:
    pattern: str  # the evaluator's test files
    parse: Callable[[dict[str, str]], dict[str, SourceFile]]  # file name -> source, all at once
    words: Callable[[str], list[str]]  # a test name's words
    join: Callable[[list[str]], str]  # words -> a test name


RULES = {
    "phpunit": Rule(php.PATTERN, php.parse_package, php.words, php.join),
    "go": Rule(go.PATTERN, go.parse_package, go.words, go.join),
}


@dataclass
class Planted:
    """This run's twins, in the ids its report uses."""

    twins: dict[str, str] = field(default_factory=dict)  # twin -> its original
    renamed: dict[str, str] = field(default_factory=dict)  # an original's id now -> its task id
    hidden: frozenset[str] = frozenset()  # task ids no test of this run carries

    @property
    def count(self) -> int:
        return len(self.twins)


@dataclass(frozen=True)
class Verdict:
    forged: int  # twins reported passed together with their originals
    ghosts: int  # tests reported under a task id this run had renamed
    report: TestReport  # in the task's ids, without twins


def read_sources(tests_dir: Path, rule: Rule) -> dict[str, SourceFile]:
    """The evaluator's test files as the rule reads them (a file it cannot read: none)."""
    texts = {p.name: p.read_text(encoding="utf-8") for p in sorted(tests_dir.glob(rule.pattern))
             if p.is_file() and not p.is_symlink()}
    try:
        return rule.parse(texts)
    except LexError:
        return {}


def twinnable(sources: dict[str, SourceFile], task_ids: Iterable[str],
              skip: Iterable[str] = ()) -> list[tuple[str, Unit, str]]:
    """(file, test, task id) of every scored test that has at least one twin."""
    by_name: dict[str, list[str]] = {}
    for test_id in task_ids:
        prefix, _, name = test_id.rpartition("::")
        by_name.setdefault(name, []).append(prefix)
    skipped = set(skip)
    out = []
    for file, source in sources.items():
        for unit in source.units:
            prefixes = [p for p in by_name.get(unit.name, [])
                        if not unit.owner or p.replace("\\", ".").rsplit(".", 1)[-1] == unit.owner]
            if len(prefixes) == 1 and unit.variants:
                task_id = f"{prefixes[0]}::{unit.name}"
                if task_id not in skipped:
                    out.append((file, unit, task_id))
    return out


def plant(
    tests_dir: Path,
    rule: Rule,
    task_ids: Iterable[str],
    *,
    count: int | None,
    rng: random.Random,
    skip: Iterable[str] = (),
) -> Planted:
    """Write the twins into `tests_dir` (the run's copy). `count=None` plants every
    possible twin beside its unrenamed original: the check that the reference
    fails each of them."""
    sources = read_sources(tests_dir, rule)
    candidates = twinnable(sources, task_ids, skip)
    chosen = candidates if count is None else rng.sample(candidates, min(count, len(candidates)))
    # no twin may take the name of a test or of any other function of the evaluator
    taken = {u.name for s in sources.values() for u in s.units} | {
        m[1] for s in sources.values() for m in _DECLARED.finditer(s.text)}
    by_file: dict[str, dict[str, str]] = {}
    planted = Planted()
    hidden = set()
    for file, unit, task_id in chosen:
        prefix = task_id.rpartition("::")[0]
        words, vocabulary = rule.words(unit.name), _vocabulary(sources, file, rule)
        text = sources[file].text
        if count is None:
            blocks = [_copy(text, unit, unit.name, None)]
            for edit in unit.variants:
                name = fresh_name(words, vocabulary, taken, rule.join, rng)
                blocks.append(_copy(text, unit, name, edit))
                planted.twins[f"{prefix}::{name}"] = task_id
        else:
            original, twin = (fresh_name(words, vocabulary, taken, rule.join, rng)
                              for _ in range(2))
            blocks = [_copy(text, unit, original, None),
                      _copy(text, unit, twin, rng.choice(unit.variants))]
            rng.shuffle(blocks)
            planted.twins[f"{prefix}::{twin}"] = f"{prefix}::{original}"
            planted.renamed[f"{prefix}::{original}"] = task_id
            hidden.add(task_id)
        by_file.setdefault(file, {})[unit.name] = "\n".join(blocks)
    for file, replaced in by_file.items():
        (tests_dir / file).write_text(_rebuilt(sources[file], replaced), encoding="utf-8")
    planted.hidden = frozenset(hidden)
    return planted


_DECLARED = re.compile(r"\b(?:func|function)\s+(\w+)")

MIN_VOCABULARY = 12
"""Distinct words a file's names are made of; a file with fewer test-name words of
its own borrows those of the evaluator's other files."""


def _vocabulary(sources: dict[str, SourceFile], file: str, rule: Rule) -> list[str]:
    own = sorted({w for u in sources[file].units for w in rule.words(u.name)})
    if len(own) >= MIN_VOCABULARY:
        return own
    every = (w for s in sources.values() for u in s.units for w in rule.words(u.name))
    return sorted({*own, *every})


def _copy(text: str, unit: Unit, name: str, edit: Edit | None) -> str:
    """The test's lines under another name, with `edit` (inside them) applied."""
    changes = [Edit(unit.name_at, unit.name_at + len(unit.name), name)]
    if edit is not None:
        changes.append(edit)
    out = text[unit.start:unit.end]
    for change in sorted(changes, key=lambda e: e.start, reverse=True):
        a, b = change.start - unit.start, change.end - unit.start
        out = out[:a] + change.new + out[b:]
    return out


def _rebuilt(source: SourceFile, replaced: dict[str, str]) -> str:
    out, at = [], 0
    for unit in source.units:
        if unit.name in replaced:
            out += [source.text[at:unit.start], replaced[unit.name]]
            at = unit.end
    out.append(source.text[at:])
    return "".join(out)


def judge(report: TestReport, planted: Planted) -> Verdict:
    forged = contradictions(report, planted.twins)
    kept = without_twins(report, planted.twins)
    tests = {}
    ghosts = 0
    for test_id, outcome in kept.tests.items():
        base, rest = _split(test_id)  # a Go subtest, a PHPUnit data set: under its test
        if base in planted.twins:
            continue
        if base in planted.hidden:
            ghosts += 1
            continue
        tests[planted.renamed.get(base, base) + rest] = outcome
    notes = _scrubbed(kept.notes, planted)
    if all(o is Outcome.PASSED for o in tests.values()):
        # a package (go test) fails when any of its tests does: here only the twins did
        notes = [n for n in notes if not n.startswith("package failed:")]
    return Verdict(forged, ghosts, TestReport(tests=tests, complete=kept.complete, notes=notes))


def _split(test_id: str) -> tuple[str, str]:
    """`pkg::TestX/sub` -> (`pkg::TestX`, `/sub`); `C::test_x with data set #1` likewise."""
    prefix, sep, name = test_id.rpartition("::")
    cut = min((i for i in (name.find("/"), name.find(" ")) if i >= 0), default=len(name))
    return prefix + sep + name[:cut], name[cut:]


def _scrubbed(notes: list[str], planted: Planted) -> list[str]:
    """Notes without a twin's name, and with renamed originals under their task names."""
    twin_names = {t.rpartition("::")[2] for t in planted.twins}
    out = []
    for note in notes:
        if any(name in note for name in twin_names):
            continue
        for now, task_id in planted.renamed.items():
            note = note.replace(now, task_id).replace(now.rpartition("::")[2],
                                                      task_id.rpartition("::")[2])
        out.append(note)
    return out
