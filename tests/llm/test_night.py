"""Night files take LLM entrants (inline or a path); their usage shows under the standings."""

from __future__ import annotations

import json
import re
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.league.night import NightError, parse_night
from cogolf.llm.fake import Step
from tests.llm.helpers import KEY, KEY_ENV, all_text, write_config

NIGHT = """\
name = "llm-night"
seed = 3
holes = 1
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "gpt"
{llm}
"""


def test_inline_and_path_entrants_become_llm_policies(tmp_path):
    (tmp_path / "c.toml").write_text('provider = "anthropic"\nmodel = "m"\n')
    inline = parse_night(
        tmp_path / "n.toml",
        NIGHT.format(
            llm='llm = { provider = "openai", model = "m", api_key_env = "K", temperature = 0 }'
        ),
    )
    ref = inline.entrants[1].policy
    assert ref is not None and ref.startswith("llm:{") and "K" in ref
    by_path = parse_night(tmp_path / "n.toml", NIGHT.format(llm='llm = "c.toml"'))
    assert by_path.entrants[1].policy == f"llm:{(tmp_path / 'c.toml').resolve()}"


@pytest.mark.parametrize(
    ("llm", "problem"),
    [
        (
            'llm = { provider = "openai" }',
            "n.toml:12: entrant[1].llm: Object missing required field `model`",
        ),
        (
            'llm = { provider = "openai", model = "m", tempreature = 1 }',
            "tempreature: unknown field (did you mean 'temperature'?) (the fields: provider,",
        ),
        ('llm = "nowhere.toml"', "entrant[1].llm:"),
        ("llm = 3", "must be a path to a config file or an inline table, got int"),
        (
            'llm = "c.toml"\npolicy = "pedant"',
            "give exactly one of 'policy' or 'command' (or 'llm', a chat model)",
        ),
        (f'llm = {{ provider = "openai", model = "m", api_key = "{KEY}" }}', "a key never goes in"),
        (
            f'llm = "c.toml"\nenv = {{ {KEY_ENV} = "{KEY}" }}',
            "entrant[1].env: an llm entrant reads its key from the environment the night runs in",
        ),
    ],
)
def test_bad_llm_entrants_are_reported_at_their_line(tmp_path, llm, problem):
    with pytest.raises(NightError) as info:
        parse_night(tmp_path / "n.toml", NIGHT.format(llm=llm))
    assert problem in str(info.value) and KEY not in str(info.value)


def test_a_night_with_an_llm_entrant_shows_its_tokens_and_cost(fake, tmp_path):
    config = write_config(
        tmp_path / "gpt.toml",
        fake,
        "openai",
        "gpt-fake",
        input_price_per_mtok=2.0,
        output_price_per_mtok=8.0,
    )
    night = tmp_path / "night.toml"
    night.write_text(NIGHT.format(llm=f'llm = "{config.name}"'))
    run = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "run", str(night)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert run.returncode == 0, run.stderr
    assert "LLM usage" in run.stdout and "night (2 matches)" in run.stdout
    # Headers whole, match ids whole (they are up to 80 characters), never cut.
    assert "turns  fallbacks  tokens in  tokens out" in run.stdout
    ids = [p.stem for p in (tmp_path / "replays" / "llm-night").glob("*.ndjson")]
    assert ids and all(f" {i} " in run.stdout for i in ids)
    folder = tmp_path / "replays" / "llm-night"
    usage = json.loads((folder / "llm" / "usage.json").read_text())
    (gpt,) = usage["entrants"]
    assert (gpt["entrant"], gpt["matches"], gpt["turns"], gpt["fallbacks"]) == ("gpt", 2, 2, 0)
    assert gpt["input_tokens"] > 0 and gpt["cost"] > 0
    assert sorted(m["slot"] for m in usage["matches"]) == [0, 1]  # both seat orders
    assert len(fake.calls_for("gpt-fake")) == 2
    # The LLM seat's log is kept like any bot's, and names every attempt.
    logs = list((folder / "logs").glob("*.gpt.log"))
    assert len(logs) == 2 and all("llm_attempt" in p.read_text() for p in logs)
    # `league standings` shows the same usage from the folder alone.
    again = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "league",
            "standings",
            str(folder),
            "--out",
            str(tmp_path / "s.json"),
        ],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=600,
    )
    assert again.returncode == 0, again.stderr
    assert "night (2 matches)" in again.stdout
    (tmp_path / "out.txt").write_text(run.stdout + run.stderr + again.stdout + again.stderr)
    leaks = [str(p) for p, data in all_text(tmp_path) if KEY.encode() in data]
    assert not leaks and KEY_ENV  # the key reached the provider, and no file
    assert all(c.key == KEY for c in fake.calls)


def test_an_llm_entrant_plays_the_nights_golf_live_and_is_scored_like_anyone(fake, tmp_path):
    config = write_config(tmp_path / "gpt.toml", fake, "anthropic", "golfer")
    fake.script("golfer", Step("```python\nf=lambda s:s[::-1]\n```"))  # the first hole
    # The second hole: the provider refuses the request, so the seat passes it, marked.
    fake.script("golfer", Step('{"error": {"message": "bad request"}}', status=400))
    night = tmp_path / "night.toml"
    text = NIGHT.format(llm=f'llm = "{config.name}"').replace(
        "parallel = 2\n", 'parallel = 2\n\n[golf]\ncourses = ["python"]\n'
    )
    night.write_text(text)
    run = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "run", str(night), "--json"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    assert run.returncode == 0, run.stderr
    assert "golf: gpt plays the python course live" in run.stderr
    folder = tmp_path / "replays" / "llm-night"
    played = folder / "llm" / "golf" / "gpt" / "python"
    assert (played / "reverse-string.py").read_text() == "f=lambda s:s[::-1]"
    assert (played / ".complete").is_file()
    (row,) = json.loads(run.stdout)["games"]["golf"]["per_course"]["python"]
    assert (row["entrant"], row["holes_passed"], row["official_bytes"]) == ("gpt", 1, 18)
    # The hole without a usable reply is counted as the entrant's fallback, not a pass.
    assert row["fallbacks"] == 1
    assert json.loads((played / ".fallbacks.json").read_text()) == {"sum-digits": "llm_no_reply"}
    (result,) = (folder / "golf").glob("*.json")
    doc = json.loads(result.read_text())
    assert doc["model"] == "gpt" and doc["holes"][0]["status"] == "passed"
    usage = json.loads((folder / "llm" / "usage.json").read_text())
    (gpt,) = usage["entrants"]
    assert gpt["matches"] == 3 and gpt["turns"] == 2 + 18  # two Cogolf holes, one course
    # Running the night again keeps the played course: no more golf requests.
    golf_calls = len([c for c in fake.calls if "Spec " not in c.prompt()])
    again = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "run", str(night)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=900,
    )
    assert again.returncode == 0, again.stderr
    assert len([c for c in fake.calls if "Spec " not in c.prompt()]) == golf_calls == 18
    leaks = [str(p) for p, data in all_text(tmp_path) if KEY.encode() in data]
    assert not leaks


def test_league_check_names_an_llm_entrant_whose_key_is_unset(tmp_path):
    night = tmp_path / "n.toml"
    night.write_text(
        NIGHT.format(
            llm='llm = { provider = "openai", model = "m", api_key_env = "COGOLF_UNSET_KEY_X" }'
        )
    )
    r = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "check", str(night)],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=120,
    )
    assert r.returncode == 2
    assert (
        "n.toml:12: entrant[1].llm: llm (an inline config): api_key_env: the environment "
        "variable COGOLF_UNSET_KEY_X is unset" in r.stderr
    )


def test_league_run_tells_an_unreachable_llm_entrant_on_its_first_match(tmp_path):
    """A provider nobody listens on: the night says so with the first match that shows it
    (the entrant, the hole, the cause, the words, the transcript), once per cause."""
    from tests.llm.test_unreachable import closed_port

    model = tmp_path / "gpt.toml"
    model.write_text(
        f'provider = "openai"\nmodel = "m"\nbase_url = "http://127.0.0.1:{closed_port()}/v1"\n'
    )
    night = tmp_path / "night.toml"
    night.write_text(NIGHT.format(llm=f'llm = "{model.name}"'))
    run = subprocess.run(
        [sys.executable, "-m", "cogolf", "league", "run", str(night)],
        capture_output=True, text=True, cwd=tmp_path, timeout=600,
    )  # fmt: skip
    assert run.returncode == 0, run.stderr
    told = [line for line in run.stderr.splitlines() if "its bot sent its own fallback" in line]
    assert len(told) == 1, run.stderr  # two matches, one cause: told once
    (line,) = told
    folder = tmp_path / "replays" / "llm-night"
    assert re.fullmatch(
        r"  (\S+): gpt, hole 1: its bot sent its own fallback \(llm_no_reply\): the provider "
        r"cannot be reached at http://127\.0\.0\.1:\d+/v1 \(3 tries\): .*; transcript: (\S+)",
        line,
    ), line
    match_id, transcript = re.search(r"  (\S+): .*; transcript: (\S+)$", line).groups()
    assert (tmp_path / transcript).parent == folder / "llm" and (tmp_path / transcript).is_file()
    assert Path(transcript).name.startswith(f"{match_id}.seat")
    assert "fallbacks" in run.stdout and "2 (llm_no_reply 2)" in run.stdout  # one hole each
