"""Night files: the shipped example parses, and every mistake names its field and line."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.league.checks import check_night
from cogolf.league.night import NightError, parse_night
from cogolf.league.tomllines import key_lines

ROOT = Path(__file__).resolve().parents[2]
EXAMPLE = ROOT / "league" / "example.toml"

GOOD = """\
name = "n1"
seed = 5
holes = 3

[[entrant]]
name = "lit"
policy = "literalist"

[[entrant]]
name = "ped"
policy = "pedant"
"""


def parse(tmp_path: Path, text: str):
    path = tmp_path / "night.toml"
    path.write_text(text)
    return parse_night(path)


def error_of(tmp_path: Path, text: str) -> str:
    with pytest.raises(NightError) as exc:
        night = parse(tmp_path, text)
        check_night(night)
    return str(exc.value)


def test_the_example_night_is_valid_and_has_four_entrants():
    night = parse_night(EXAMPLE)
    check_night(night)
    assert night.name == "example"
    assert len(night.entrants) >= 4
    assert night.executor == "local"


def test_defaults(tmp_path: Path):
    night = parse(tmp_path, GOOD)
    assert (night.seed, night.holes, night.executor) == (5, 3, "local")
    assert night.hole_deadline == 40.0 and night.parallel >= 1
    assert [e.name for e in night.entrants] == ["lit", "ped"]


@pytest.mark.parametrize(
    ("text", "expected"),
    [
        (GOOD.replace("seed = 5", 'seed = "five"'), ":2: seed: must be an integer, got str 'five'"),
        (GOOD.replace("seed = 5", "seed = -1"), ":2: seed: must be between 0 and"),
        (GOOD.replace("seed = 5\n", ""), "night.toml: missing required field 'seed'"),
        (GOOD.replace('name = "n1"', 'name = "bad name"'), ":1: name: 'bad name': use 1-48"),
        (GOOD.replace("holes = 3", "holes = 3\nhoels = 2"), ":4: hoels: unknown field"),
        (GOOD.replace("holes = 3", "holes = 50"), ":3: holes: the deck core has 12 specs"),
        (GOOD.replace("holes = 3", "hole_deadline = 0"), ":3: hole_deadline: must be more than 0"),
        (GOOD.replace('policy = "pedant"', 'policy = "nope"'), ":11: entrant[1].policy: 'nope'"),
        (
            GOOD.replace('policy = "pedant"', 'policy = "bots/missing.py:play"'),
            ":11: entrant[1].policy: no file bots/missing.py",
        ),
        (
            GOOD.replace('policy = "pedant"', 'policy = "no_such_module_x:play"'),
            ":11: entrant[1].policy: policy 'no_such_module_x:play': cannot import",
        ),
        (
            GOOD.replace('policy = "pedant"', 'policy = "cogolf.values:no_such_name"'),
            ":11: entrant[1].policy: policy 'cogolf.values:no_such_name': cogolf.values has no",
        ),
        (GOOD.replace('name = "ped"', 'name = "lit"'), ":10: entrant[1].name: 'lit' is already"),
        (
            GOOD.replace('policy = "pedant"', 'policy = "pedant"\ncommand = "x"'),
            ":9: entrant[1]: give exactly one of 'policy' or 'command'",
        ),
        (GOOD.replace('policy = "pedant"', "command = []"), ":11: entrant[1].command: is empty"),
        (
            GOOD.replace('name = "ped"', 'name = "ped"\ncolour = 1'),
            ":11: entrant[1].colour: unknown",
        ),
        (GOOD + 'executor = "slurm"\n', ":12: entrant[1].executor: unknown field"),
        ('executor = "slurm"\n' + GOOD, ":1: executor: 'slurm': expected one of local, ray"),
        ('address = "ray://h:1"\n' + GOOD, ":1: address: only used with executor"),
        ("parallel = 0\n" + GOOD, ":1: parallel: must be between 1 and 256, got 0"),
        ('deck = "nowhere"\nreferences = "x"\n' + GOOD, ":1: deck: no directory"),
        (GOOD.split("[[entrant]]")[0], "no entrants: add at least 2"),
        (GOOD.rsplit("[[entrant]]", 1)[0], ":5: entrant: a night needs 2 to 64 entrants, got 1"),
        (GOOD.replace("holes = 3", "holes = = 3"), "not valid TOML: Invalid value (at line 3"),
    ],
)
def test_mistakes_name_the_line_and_field(tmp_path: Path, text: str, expected: str):
    message = error_of(tmp_path, text)
    assert expected in message
    assert message.startswith(str(tmp_path / "night.toml"))


def test_file_policies_are_found_beside_the_night_file(bot_dir: Path):
    (bot_dir / "bots").mkdir(mode=0o755)
    (bot_dir / "bots" / "mine.py").write_text("def play(observation):\n    return {}\n")
    night = parse(bot_dir, GOOD.replace('policy = "pedant"', 'policy = "bots/mine.py:play"'))
    check_night(night)
    policy = night.entrants[1].policy
    assert policy is not None and policy.endswith("mine.py:play") and Path(policy[:-5]).is_file()


def test_a_policy_file_bots_cannot_read_is_reported_before_the_night(tmp_path: Path):
    (tmp_path / "mine.py").write_text("def play(observation):\n    return {}\n")
    message = error_of(tmp_path, GOOD.replace('policy = "pedant"', 'policy = "mine.py:play"'))
    assert ":11: entrant[1].policy:" in message and "not readable by every user" in message


def test_a_policy_that_raises_on_import_is_reported_at_its_line(bot_dir: Path):
    # Loaded behind the bot's walls, as its bot would load it: the file must be readable.
    (bot_dir / "boom.py").write_text("raise RuntimeError('no')\n")
    message = error_of(bot_dir, GOOD.replace('policy = "pedant"', 'policy = "boom.py:play"'))
    assert ":11: entrant[1].policy:" in message and "RuntimeError: no" in message


def test_key_lines_skip_multiline_strings_and_count_table_arrays():
    text = (
        'name = "x"\n'
        'note = """\n'
        "seed = 1\n"
        '"""\n'
        "seed = 2\n"
        "[[entrant]]\n"
        "name = 'a'\n"
        "[[entrant]]\n"
        '"name" = "b"\n'
        "[golf]\n"
        "course.par = 3\n"
    )
    lines = key_lines(text)
    assert lines[("seed",)] == 5
    assert lines[("entrant", 0)] == 6 and lines[("entrant", 0, "name")] == 7
    assert lines[("entrant", 1)] == 8 and lines[("entrant", 1, "name")] == 9
    assert lines[("golf", "course", "par")] == 11


def test_cli_check_prints_the_schedule_and_rejects_a_bad_file(tmp_path: Path):
    good = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "check", str(EXAMPLE)],
        capture_output=True,
        text=True,
        cwd=ROOT,
    )
    assert good.returncode == 0, good.stderr
    assert "12 matches" in good.stdout and "example-literalist-vs-pedant" in good.stdout
    bad = tmp_path / "bad.toml"
    bad.write_text(GOOD.replace("seed = 5", "seed = 5.5"))
    out = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "run", str(bad)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
    )
    assert out.returncode == 2
    assert f"{bad}:2: seed: must be an integer, got float 5.5" in out.stderr
    assert not (tmp_path / "replays").exists()


def test_a_module_policy_bots_cannot_import_is_reported_before_the_night(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
):
    (tmp_path / "mypolicies.py").write_text("def play(observation):\n    return {}\n")
    monkeypatch.syspath_prepend(str(tmp_path))  # importable here, not by a walled bot
    message = error_of(tmp_path, GOOD.replace('policy = "pedant"', 'policy = "mypolicies:play"'))
    assert ":11: entrant[1].policy:" in message and "not in this installation's packages" in message


def test_a_command_bots_working_folder_must_be_readable_by_every_user(tmp_path: Path):
    text = GOOD.replace('policy = "pedant"', 'command = "python3 bot.py {url}"')
    message = error_of(tmp_path, text)  # pytest's folders are private to root
    assert ":11: entrant[1].command:" in message and "every user can read" in message
    message = error_of(tmp_path, text + 'workdir = "nowhere"\n')
    assert ":12: entrant[1].workdir:" in message and "nowhere" in message


@pytest.mark.parametrize(
    ("env", "problem"),
    [
        ('"A=1"', "must be a table of strings"),
        ("{ COGOLF_URL = \"ws://elsewhere\" }", "COGOLF_URL is set by the night"),
        ("{ A = 1 }", "A: must be a string"),
        ('{ "1BAD" = "x" }', "'1BAD' is not a variable name"),
    ],
)
def test_a_bots_environment_is_checked(bot_dir: Path, env: str, problem: str):
    text = GOOD.replace('policy = "pedant"', 'command = "python3 bot.py"') + f"env = {env}\n"
    message = error_of(bot_dir, text)
    assert ":12: entrant[1].env:" in message and problem in message
