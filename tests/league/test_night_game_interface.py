"""The league plays every game scored from files through `NightGame` alone: a game the
league has never heard of, added to the registry, gets its night-file section, its jobs,
resume, void markers, its table and its place in the combined table."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path
from typing import Any

import msgspec
import pytest

from cogolf.game import (
    GamePlan,
    GameTable,
    JobFault,
    NightGame,
    NightJob,
    NightSetup,
    ResultFileError,
    Section,
    SectionError,
)
from cogolf.games import registry
from cogolf.league.night import NightError, parse_night
from cogolf.league.plan import night_plan
from cogolf.league.publish import standings_for_dir
from cogolf.league.runner import manifest_for
from cogolf.league.scoring import score_jobs
from cogolf.league.table import render


class TallySession:
    """Scores a submission by the number of lines of its file; an empty file is the
    harness's fault (retried, then void)."""

    def __init__(self) -> None:
        self.plays = 0

    async def prepare(self) -> None:
        return None

    def close(self) -> None:
        return None

    def kept(self, job: NightJob, path: Path) -> bool:
        return json.loads(path.read_text())["entrant"] == job.entrant

    async def play(self, job: NightJob, path: Path) -> str:
        self.plays += 1
        lines = job.submission.read_text().count("\n")
        if lines == 0:
            raise JobFault("empty file")
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps({"entrant": job.entrant, "item": job.item, "lines": lines}))
        return f"{lines} lines"


class Tally:
    name = "tally"
    fields = ("items",)
    placeholders = ("item",)
    with_attempts = False
    patch_files = True

    def __init__(self) -> None:
        self.last_session = TallySession()

    def parse_section(self, section: Section, base: Path) -> tuple[str, ...]:
        items = section.string_list("items", required=True)
        if "bad" in items:
            raise SectionError(("items", items.index("bad")), "no such item")
        return tuple(items)

    def plan(self, settings: tuple[str, ...], *, check_toolchains: bool) -> GamePlan:
        return GamePlan(settings, 0)

    def template_fields(self, item: str, attempt: int) -> dict[str, str | int]:
        return {"item": item}

    def result_name(self, entrant: str, item: str, attempt: int, night: str) -> str:
        return f"{entrant}.{item}.json"

    def session(self, plan: GamePlan, night_dir: Path, night: str) -> TallySession:
        self.last_session = TallySession()
        return self.last_session

    def read_result(self, path: Path, night: str, source: str) -> dict[str, Any]:
        doc = json.loads(path.read_text())
        if path.name != f"{doc['entrant']}.{doc['item']}.json":
            raise ResultFileError(f"{path}: renamed")
        return doc

    def result_key(self, record: dict[str, Any]) -> tuple[str, str, int]:
        return record["entrant"], record["item"], 0

    def default_setup(self, records: list[dict[str, Any]]) -> NightSetup:
        return NightSetup(tuple(sorted({r["item"] for r in records})), 0, None)

    def table(self, records: list[dict[str, Any]], setup: NightSetup,
              void: list[dict[str, Any]], problems: list[str]) -> GameTable:
        totals: dict[str, int] = {}
        for r in records:
            totals[r["entrant"]] = totals.get(r["entrant"], 0) + r["lines"]
        rows = sorted(totals.items(), key=lambda kv: (-kv[1], kv[0]))
        return GameTable({"table": [{"entrant": e, "lines": n} for e, n in rows], "void": void},
                         {e: (-n,) for e, n in rows})

    def render(self, doc: dict[str, Any]) -> list[str]:
        return ["", "Tally"] + [f"  {r['entrant']} {r['lines']}" for r in doc["table"]]


NIGHT_FILE = """\
name = "t1"
seed = 3
holes = 1
[tally]
items = ["a", "b"]
[[entrant]]
name = "lit"
policy = "literalist"
tally = "subs/lit/{item}.txt"
[[entrant]]
name = "ped"
policy = "pedant"
tally = "subs/ped/{item}.txt"
"""


@pytest.fixture
def tally(monkeypatch: pytest.MonkeyPatch) -> Tally:
    game = Tally()
    assert isinstance(game, NightGame)
    monkeypatch.setitem(registry.NIGHT, game.name, game)
    return game


def _files(tmp_path: Path) -> Path:
    for who, texts in (("lit", {"a": "1\n2\n3\n", "b": "1\n"}), ("ped", {"a": "1\n", "b": ""})):
        (tmp_path / "subs" / who).mkdir(parents=True)
        for item, text in texts.items():
            (tmp_path / "subs" / who / f"{item}.txt").write_text(text)
    path = tmp_path / "night.toml"
    path.write_text(NIGHT_FILE)
    return path


def test_a_new_game_plays_through_the_league_without_a_league_change(
    tmp_path: Path, tally: Tally
) -> None:
    night = parse_night(_files(tmp_path))
    plan = night_plan(night)
    assert [j.label for j in plan.jobs] == ["tally lit a", "tally lit b", "tally ped a",
                                            "tally ped b"]
    folder = tmp_path / "replays" / night.name
    folder.mkdir(parents=True)
    manifest = manifest_for(night, [], plan)
    assert manifest.solo is not None and manifest.solo.games()["tally"] == (["a", "b"], 0)
    (folder / "night.json").write_bytes(msgspec.json.encode(manifest))

    run = asyncio.run(score_jobs(night, plan, folder, parallel=2))
    assert run.played == ["tally lit a", "tally lit b", "tally ped a"]
    assert run.void == ["tally ped b"]  # retried once, then void
    marker = json.loads((folder / "tally" / "void" / "ped.b.json").read_text())
    assert marker["attempts"] == 2 and marker["cause"] == "empty file"

    doc = standings_for_dir(folder)
    assert doc["games"]["tally"]["table"] == [{"entrant": "lit", "lines": 4},
                                              {"entrant": "ped", "lines": 1}]
    assert doc["games"]["tally"]["void"][0]["item"] == "b"
    assert doc["combined"]["games"] == ["cogolf", "tally"]
    assert "Tally" in render(doc) and "  lit 4" in render(doc)

    again = asyncio.run(score_jobs(night, plan, folder, parallel=2))
    assert again.skipped == ["tally lit a", "tally lit b", "tally ped a"]
    assert tally.last_session.plays == 2  # only the void job, tried twice


def test_a_new_games_section_errors_name_its_line(tmp_path: Path, tally: Tally) -> None:
    path = _files(tmp_path)
    path.write_text(NIGHT_FILE.replace('items = ["a", "b"]', 'items = ["a", "bad"]'))
    with pytest.raises(NightError, match=r"tally\.items\[1\].*no such item"):
        parse_night(path)
    path.write_text(NIGHT_FILE.replace('tally = "subs/lit/{item}.txt"', 'tally = "subs/{x}"'))
    with pytest.raises(NightError, match=r"unknown placeholder \{x\}"):
        parse_night(path)
