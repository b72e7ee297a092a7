"""The solo sections of a night file: what they parse to, and every mistake named by field
and line; then the solo games' void markers and resume on a real (fast) golf night."""

from __future__ import annotations

import asyncio
import io
import json
from pathlib import Path

import msgspec
import pytest

from cogolf.league.checks import check_night
from cogolf.league.night import NightError, parse_night
from cogolf.league.plan import night_plan
from cogolf.league.publish import standings_for_dir
from cogolf.league.runner import manifest_for
from cogolf.league.schedule import schedule
from cogolf.league.scoring import score_jobs
from cogolf.league.table import render

ROOT = Path(__file__).resolve().parents[2]
TEXTKIT = ROOT / "references" / "commit0" / "textkit"
CSV_TASK = ROOT / "references" / "projects" / "csv_importer"

HEAD = """\
name = "s1"
seed = 5
holes = 1
"""
ENTRANTS = """
[[entrant]]
name = "lit"
policy = "literalist"
golf = "subs/lit/{course}"

[[entrant]]
name = "ped"
policy = "pedant"
"""


def write(tmp_path: Path, text: str) -> Path:
    path = tmp_path / "night.toml"
    path.write_text(text)
    (tmp_path / "subs" / "lit" / "python").mkdir(parents=True, exist_ok=True)
    return path


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(NightError) as exc:
        check_night(parse_night(write(tmp_path, text)))
    return str(exc.value)


def test_solo_sections_parse_with_defaults(tmp_path: Path) -> None:
    text = HEAD + f"""
[golf]
courses = ["python"]
[commit0]
tasks = ["{TEXTKIT}"]
[project]
tasks = ["{CSV_TASK}"]
""" + ENTRANTS.replace('golf = "subs/lit/{course}"', 'golf = "subs/lit/{course}"\n'
                       f'project = "{CSV_TASK / "solution"}"')
    night = parse_night(write(tmp_path, text))
    check_night(night)
    assert tuple(night.sections) == ("golf", "commit0", "project")
    assert night.sections["project"].attempts == 5
    assert night.sections["commit0"].quality is True
    plan = night_plan(night)
    assert [j.label for j in plan.jobs] == ["golf lit python"] + [
        f"project lit csv_importer attempt {n}" for n in range(1, 6)]
    assert plan.jobs[0].submission == tmp_path / "subs" / "lit" / "python"
    manifest = manifest_for(night, [], plan)
    assert manifest.solo is not None and manifest.solo.commit0_tasks == ["textkit"]
    assert [e.solo for e in manifest.entrants] == [["golf", "project"], []]


@pytest.mark.parametrize(
    ("section", "entrant_extra", "expected"),
    [
        ('[golf]\ncourses = ["python"]\ncolour = 1\n', "",
         ":6: golf.colour: unknown field (expected one of: courses, per_test_seconds"),
        ('[golf]\ncourses = ["python", "cobol"]\n', "",
         ":5: golf.courses[1]: unknown course 'cobol'"),
        ('[golf]\ncourses = ["python", "python"]\n', "", "golf.courses[1]: 'python' is listed"),
        ('[golf]\ncourses = []\n', "", ":5: golf.courses: is empty"),
        ("[golf]\n", "", ":4: golf: missing required field 'courses'"),
        ('golf = "python"\n', "", ":4: golf: must be a table ([golf])"),
        ('[golf]\ncourses = ["python"]\nper_test_seconds = -1\n', "",
         ":6: golf.per_test_seconds: must be more than 0"),
        ('[project]\ntasks = ["x"]\nattempts = 6\n', "",
         ":6: project.attempts: must be between 1 and 5, got 6"),
        ('[golf]\ncourses = ["python"]\n[commit0]\ntasks = ["nowhere"]\n', "",
         ":7: commit0.tasks[0]: no directory"),
        ('[commit0]\ntasks = [3]\n', "", "commit0.tasks[0]: must be a non-empty string"),
        (f'[golf]\ncourses = ["python"]\n[project]\ntasks = ["{TEXTKIT}"]\n', "",
         ":7: project.tasks[0]: "),
        ('[golf]\ncourses = ["python"]\n', 'commit0 = "subs/{task}"\n',
         "entrant[1].commit0: the night has no [commit0] section"),
        ('[golf]\ncourses = ["python"]\n', 'golf = "subs/{entrant}/{course}"\n',
         "entrant[1].golf: unknown placeholder {entrant} (allowed: {course})"),
        ('[golf]\ncourses = ["python"]\n', 'golf = "subs/{course"\n', "entrant[1].golf: "),
        ('[golf]\ncourses = ["python"]\n', 'golf = "subs/missing/{course}"\n',
         "entrant[1].golf: no submission for python: "),
        ('[golf]\ncourses = ["python"]\n', 'golfing = "x"\n', "entrant[1].golfing: unknown field"),
    ],
)
def test_solo_mistakes_name_their_field_and_line(
    tmp_path: Path, section: str, entrant_extra: str, expected: str
) -> None:
    message = error_of(tmp_path, HEAD + section + ENTRANTS + entrant_extra)
    assert expected in message, message
    assert message.startswith(str(tmp_path / "night.toml"))


def test_a_golf_night_writes_results_voids_a_bad_submission_and_resumes(tmp_path: Path) -> None:
    """Golf with nothing submitted costs no runs, so this exercises the whole solo path fast."""
    (tmp_path / "subs" / "ped" / "python" / "reverse-string").mkdir(parents=True)
    for n in range(17):  # more attempts than a hole allows: the entrant's fault, void at once
        (tmp_path / "subs" / "ped" / "python" / "reverse-string" / f"{n:02d}.py").write_text("")
    text = HEAD + '[golf]\ncourses = ["python"]\n' + ENTRANTS + 'golf = "subs/ped/{course}"\n'
    night = parse_night(write(tmp_path, text))
    deck = check_night(night)
    plan = night_plan(night)
    folder = tmp_path / "replays" / night.name
    folder.mkdir(parents=True)
    manifest = manifest_for(night, schedule(night, deck.digest), plan)
    (folder / "night.json").write_bytes(msgspec.json.encode(manifest))
    lines: list[str] = []
    run = asyncio.run(score_jobs(night, plan, folder, parallel=2, report=lines.append))
    assert run.played == ["golf lit python"] and run.void == ["golf ped python"]
    marker = json.loads((folder / "golf" / "void" / "ped.python.json").read_text())
    assert marker["attempts"] == 1 and "at most 16" in marker["cause"]
    doc = standings_for_dir(folder)
    assert doc["games"]["golf"]["void"][0]["entrant"] == "ped"
    assert [r["entrant"] for r in doc["games"]["golf"]["per_course"]["python"]] == ["lit"]
    assert "void (not scored)" in render(doc)
    # Both entrants lack a played Cogolf match here, so neither is complete.
    assert {r["entrant"] for r in doc["combined"]["incomplete"]} == {"lit", "ped"}

    result = folder / "golf" / "lit.python.s1.json"
    stamp = result.stat().st_mtime_ns
    again = asyncio.run(score_jobs(night, plan, folder, parallel=2, report=io.StringIO().write))
    assert again.skipped == ["golf lit python"] and again.void == ["golf ped python"]
    assert result.stat().st_mtime_ns == stamp
    result.write_text("{}")  # no longer a valid result: played again
    third = asyncio.run(score_jobs(night, plan, folder, parallel=2))
    assert third.played == ["golf lit python"]


def test_the_examples_commented_solo_sections_parse(tmp_path: Path) -> None:
    """The example documents the solo sections in comments; uncommented, they must parse."""
    text = (ROOT / "league" / "example.toml").read_text()
    lines = text.splitlines()
    start = lines.index("# [golf]")
    end = next(i for i, line in enumerate(lines) if line.startswith("# attempts"))
    solo = [line[2:] if line.startswith("# ") and not line.startswith("#  ") else ""
            for line in lines[start:end + 1]]
    entrants = lines.index("[[entrant]]")
    variant = "\n".join(lines[:start] + solo + lines[end + 1:entrants] + lines[entrants:])
    path = tmp_path / "example.toml"
    path.write_text(variant)
    night = parse_night(path)
    assert night.sections["golf"].courses == ("python", "racket")
    assert night.sections["commit0"].tasks[0].name == "textkit"
    assert night.sections["project"].attempts == 5
