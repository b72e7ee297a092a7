"""A night file's agent entrants: accepted alone (no Cogolf match), and every mistake
named by its line and field."""

from __future__ import annotations

from pathlib import Path

import pytest

from cogolf.league.night import NightError, parse_night
from cogolf.league.plan import night_plan
from cogolf.league.schedule import schedule
from tests.agents.conftest import CSV_TASK

HEAD = f'name = "n"\nseed = 1\n[project]\ntasks = ["{CSV_TASK}"]\nattempts = 2\n'
AGENT = 'agent = { llm = { provider = "openai", model = "m" }, time_limit = 60 }\n'


def test_agent_entrants_play_only_the_offline_games(tmp_path: Path) -> None:
    text = (HEAD + f'[[entrant]]\nname = "a"\n{AGENT}[[entrant]]\nname = "b"\n{AGENT}'
            '[[entrant]]\nname = "lit"\npolicy = "literalist"\n'
            f'project = "{CSV_TASK}/solution/"\n')
    night = parse_night(tmp_path / "n.toml", text)
    assert [e.plays_cogolf for e in night.entrants] == [False, False, True]
    assert schedule(night, "digest") == []  # one policy entrant: no match to play
    jobs = night_plan(night).jobs
    agents = [(j.entrant, j.attempt) for j in jobs if j.agent is not None]
    assert agents == [("a", 1), ("a", 2), ("b", 1), ("b", 2)]
    assert all(j.submission is None for j in jobs if j.agent is not None)


@pytest.mark.parametrize(("entrant", "message"), [
    (f'name = "a"\n{AGENT}project = "subs/"\n', r"entrant\[0\]\.project.*plays its tasks itself"),
    ('name = "a"\nagent = "x.toml"\n', r"entrant\[0\]\.agent.*must be a table"),
    ('name = "a"\nagent = { time_limit = 60 }\n', r"entrant\[0\]\.agent.*llm: required"),
    ('name = "a"\nagent = { llm = { provider = "openai", model = "m" }, max_turns = 0 }\n',
     "max_turns: must be within 1..1000"),
    ('name = "a"\n', "give exactly one of 'policy' or 'command'"),
])
def test_agent_entrant_mistakes(tmp_path: Path, entrant: str, message: str) -> None:
    text = HEAD + f"[[entrant]]\n{entrant}[[entrant]]\nname = \"b\"\n{AGENT}"
    with pytest.raises(NightError, match=message):
        parse_night(tmp_path / "n.toml", text)


def test_an_agent_needs_a_section_to_play(tmp_path: Path) -> None:
    text = f'name = "n"\nseed = 1\n[[entrant]]\nname = "a"\n{AGENT}' \
        '[[entrant]]\nname = "b"\npolicy = "literalist"\n'
    with pytest.raises(NightError, match="no \\[commit0\\], \\[project\\] or \\[golf\\] section"):
        parse_night(tmp_path / "n.toml", text)


def test_an_agent_entrant_plays_golf_as_its_model(tmp_path: Path) -> None:
    from cogolf.commands.llm_golf import golf_policy
    from cogolf.llm.entrant import PREFIX, config_of

    text = ('name = "n"\nseed = 1\n[golf]\ncourses = ["python"]\n[[entrant]]\nname = "a"\n'
            'agent = { llm = { provider = "anthropic", model = "m", temperature = 0.5, '
            'extra = { top_p = 0.9 } } }\n[[entrant]]\nname = "b"\npolicy = "literalist"\n')
    night = parse_night(tmp_path / "n.toml", text)
    agent, bot = night.entrants
    policy = golf_policy(agent)
    assert policy is not None and policy.startswith(PREFIX)
    assert config_of(policy.removeprefix(PREFIX)) == agent.agent.llm
    assert golf_policy(bot) is None


def test_the_commit0_and_project_tables_show_an_agents_attempts() -> None:
    from cogolf.game import NightSetup
    from cogolf.games.commit0.night import GAME as COMMIT0
    from cogolf.games.commit0.results import ResultError, read_record

    agent = {"status": "timeout", "turns": 7, "input_tokens": 900, "output_tokens": 100,
             "cost": 0.25, "seconds": 61.0}
    docs = [{"game": "commit0", "schema": 1, "task": "textkit", "entrant": e,
             "pass_rate": rate, **({"agent": agent} if e == "bot" else {})}
            for e, rate in (("bot", 0.5), ("sub", 1.0))]
    records = [read_record(d, f"{d['entrant']}.textkit.json") for d in docs]
    table = COMMIT0.table(records, NightSetup(("textkit",), 0, None), [], [])
    rows = {r["entrant"]: r for r in table.doc["table"]}
    assert rows["bot"]["cost"] == 0.25 and rows["bot"]["agent"]["textkit"]["status"] == "timeout"
    assert "agent" not in rows["sub"]
    text = "\n".join(COMMIT0.render(table.doc))
    assert "0.500 timeout 1000tok 61s" in text and "0.2500" in text
    with pytest.raises(ResultError, match=r"agent\.turns must be a count"):
        read_record({**docs[0], "agent": {**agent, "turns": -1}}, "x.json")
