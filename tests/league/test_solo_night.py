"""A night with all four games end to end: real matches, real golf runs, real Commit-0 and
project pytest runs, then the combined table; resumed, and recomputed from the folder."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.games.commit0.stubber import stub_source

REPO = Path(__file__).resolve().parents[2]
GOLF_SOLUTIONS = REPO / "tests" / "games" / "golf" / "solutions" / "python"
TEXTKIT = REPO / "references" / "commit0" / "textkit"
CSV_TASK = REPO / "references" / "projects" / "csv_importer"
CSV_TEMPLATE = REPO / "deck" / "projects" / "csv_importer" / "template"
ATTEMPTS = 5  # the default and the rule (the night file may lower it with `attempts`)
BOB_GOLF = ("reverse-string", "palindrome", "sum-digits")


def _league(*args: str) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", "league", *args],
        cwd=REPO, capture_output=True, text=True, timeout=900, check=False,
    )


def _skeleton(dest: Path) -> None:
    """textkit with every body stubbed the way `commit0 prepare` stubs it."""
    shutil.copytree(TEXTKIT / "src", dest / "src")
    for path in sorted((dest / "src" / "textkit").glob("*.py")):
        module = f"textkit.{path.stem}"
        keep = frozenset({"_build_table"}) if path.stem == "roman" else frozenset()
        path.write_text(stub_source(path.read_text(), module, keep).source)


def write_night(root: Path) -> Path:
    subs = root / "subs"
    shutil.copytree(GOLF_SOLUTIONS, subs / "alice" / "golf")
    (subs / "bob" / "golf").mkdir(parents=True)
    for hole in BOB_GOLF:
        shutil.copy(GOLF_SOLUTIONS / f"{hole}.py", subs / "bob" / "golf" / f"{hole}.py")
    (subs / "carol" / "golf").mkdir(parents=True)  # entered, nothing submitted
    shutil.copytree(TEXTKIT / "src", subs / "alice" / "commit0" / "textkit" / "src")
    _skeleton(subs / "bob" / "commit0" / "textkit")
    naive = subs / "bob" / "project" / "csv_importer"
    naive.mkdir(parents=True)
    text = (CSV_TEMPLATE / "contacts_import.py").read_text()
    (naive / "contacts_import.py").write_text(text + "\n# reviewed, logic unchanged\n")
    night = root / "solo.toml"
    night.write_text(
        f"""
name = "solo"
seed = 7
holes = 1
parallel = 2

[golf]
courses = ["python"]

[commit0]
tasks = ["{TEXTKIT}"]
quality = false

[project]
tasks = ["{CSV_TASK}"]  # attempts = 5, the default

[[entrant]]
name = "alice"
policy = "literalist"
golf = "subs/alice/golf/"
commit0 = "subs/alice/commit0/{{task}}/"
project = "{CSV_TASK / 'solution'}"

[[entrant]]
name = "bob"
policy = "pedant"
golf = "subs/bob/golf"
commit0 = "subs/bob/commit0/{{task}}"
project = "subs/bob/project/{{task}}"

[[entrant]]
name = "carol"
policy = "cogolf.league.sample_bots:Hybrid"
golf = "subs/carol/{{course}}"
"""
    )
    (subs / "carol" / "python").mkdir()
    return night


@pytest.mark.slow
def test_a_night_of_all_four_games_gives_the_combined_table(tmp_path: Path) -> None:
    night = write_night(tmp_path)
    replays, league = tmp_path / "replays", tmp_path / "league"
    first = _league("run", str(night), "--replays", str(replays), "--league-dir", str(league))
    assert first.returncode == 0, first.stderr[-3000:]
    standings = league / "solo" / "standings.json"
    doc = json.loads(standings.read_bytes())
    folder = replays / "solo"

    # Every result is a file of the night's folder, in the game's own format.
    assert sorted(p.name for p in (folder / "golf").glob("*.json")) == [
        "alice.python.solo.json", "bob.python.solo.json", "carol.python.solo.json"]
    assert sorted(p.name for p in (folder / "commit0").glob("*.json")) == [
        "alice.textkit.json", "bob.textkit.json"]
    assert sorted(p.name for p in (folder / "project").glob("*.json")) == [
        f"{e}.csv_importer.{n}.json" for e in ("alice", "bob") for n in range(1, ATTEMPTS + 1)]
    assert (folder / "tasks" / "commit0" / "textkit" / "task.json").is_file()

    games = doc["games"]
    assert set(games) == {"cogolf", "golf", "commit0", "project"}
    assert games["cogolf"]["matches"]["played"] == 6
    golf = {r["entrant"]: r for r in games["golf"]["per_course"]["python"]}
    assert golf["alice"]["holes_passed"] == 18 and golf["alice"]["rank"] == 1
    assert golf["bob"]["holes_passed"] == len(BOB_GOLF) and golf["bob"]["rank"] == 2
    assert golf["carol"]["holes_passed"] == 0 and golf["carol"]["score"] == 18000.0
    c0 = {r["entrant"]: r for r in games["commit0"]["table"]}
    assert c0["alice"]["mean_pass_rate"] == 1.0 and c0["alice"]["rank"] == 1
    assert c0["bob"]["mean_pass_rate"] == 0.0 and c0["bob"]["rank"] == 2
    assert "carol" not in c0
    project = {r["entrant"]: r for r in games["project"]["table"]}
    assert project["alice"]["per_task"] == {"csv_importer": float(ATTEMPTS)}
    assert project["bob"]["per_task"] == {"csv_importer": 0.0}
    assert games["project"]["out_of"] == ATTEMPTS

    combined = doc["combined"]
    assert combined["games"] == ["cogolf", "golf", "commit0", "project"]
    assert [r["entrant"] for r in combined["table"]] == ["alice", "bob"]
    alice, bob = combined["table"]
    assert (alice["rank"], bob["rank"]) == (1, 2)
    assert {g: alice["ranks"][g] for g in ("golf", "commit0", "project")} == {
        "golf": 1, "commit0": 1, "project": 1}
    cogolf_ranks = {alice["ranks"]["cogolf"], bob["ranks"]["cogolf"]}
    assert cogolf_ranks <= {1, 2}
    assert alice["mean_rank"] == round((3 + alice["ranks"]["cogolf"]) / 4, 3)
    assert combined["incomplete"] == [
        {"entrant": "carol", "missing": ["commit0", "project"], "has": ["cogolf", "golf"]}]
    for heading in ("Golf: python", "Commit-0", "Project", "Combined", "carol: missing"):
        assert heading in first.stdout
    # Every number says why: Commit-0's counts (and status), each project attempt's checks.
    detail = {r["entrant"]: r["detail"]["textkit"] for r in games["commit0"]["table"]}
    assert detail["alice"]["passed"] == detail["alice"]["total"] > 0
    assert detail["bob"]["passed"] == 0 and detail["bob"]["total"] == detail["alice"]["total"]
    n = detail["alice"]["total"]
    assert f"1.000 ({n}/{n})" in first.stdout and f"0.000 (0/{n})" in first.stdout
    from cogolf.pages.nights import NightFolders
    from cogolf.pages.nights_render import render_night
    from cogolf.pages.nights_view import build_night

    page = render_night(build_night(NightFolders(league, replays), "solo", lambda mid: mid))
    assert f'<span class="why">{n}/{n} tests</span>' in page
    assert f'<span class="why">0/{n} tests' in page
    assert '<span class="why">#1 1.00 F' in page and " S" in page  # an attempt's checks
    # The night's page followed the solo phase: every result done, none left.
    progress = json.loads((folder / "progress.json").read_text())
    assert progress["solo"]["done"] == progress["solo"]["total"] > 0

    # Resumed: every result is kept, and the standings do not change by a byte.
    before = standings.read_bytes()
    # (progress.json tells a page how the night is going: it is written on every run)
    stamp = {p: p.stat().st_mtime_ns for p in folder.rglob("*.json")
             if "tasks" not in p.parts and p.name != "progress.json"}
    again = _league("run", str(night), "--replays", str(replays), "--league-dir", str(league))
    assert again.returncode == 0, again.stderr[-3000:]
    assert "0 played" in again.stderr and "kept" in again.stderr
    assert {p: p.stat().st_mtime_ns for p in stamp if p.name != "night.json"} == {
        p: t for p, t in stamp.items() if p.name != "night.json"}
    assert standings.read_bytes() == before

    # Recomputed from the folder alone, elsewhere: the same bytes.
    moved = tmp_path / "elsewhere" / "solo"
    shutil.copytree(folder, moved)
    out = tmp_path / "recomputed.json"
    st = _league("standings", str(moved), "--out", str(out))
    assert st.returncode == 0, st.stderr
    assert out.read_bytes() == before
