"""One spelling per option across the command line (issue 18), through the CLI."""

from __future__ import annotations

import argparse
import json
import math
import subprocess
import sys
import urllib.request
from pathlib import Path

from cogolf.cli import COMMANDS, _walk, build_parser
from cogolf.games.commit0.results import Commit0Result
from tests.cli.run import cogolf
from tests.games.project.test_project_table import TASKS, results
from tests.serving import start_serve

ROOT = Path(__file__).resolve().parents[2]


def test_version() -> None:
    done = cogolf("--version")
    assert done.returncode == 0
    assert done.stdout.startswith("cogolf 0.1.0 ") and "protocol cogame.cogolf.v1" in done.stdout


def test_every_option_of_every_command_has_help() -> None:
    missing = [
        f"{parser.prog} {'/'.join(action.option_strings) or action.dest}"
        for parser in _walk(build_parser(full=True))
        for action in parser._actions
        if not isinstance(action, (argparse._HelpAction, argparse._SubParsersAction))
        and not action.help
    ]
    assert missing == []


def test_the_lazy_table_matches_the_modules() -> None:
    full = build_parser(full=True)
    sub = next(a for a in full._actions if isinstance(a, argparse._SubParsersAction))
    helps = {c.dest: c.help for c in sub._choices_actions}
    assert helps == {name: c.help for name, c in COMMANDS.items()}


def test_every_sandbox_option_is_fork_or_spawn() -> None:
    seen = 0
    for parser in _walk(build_parser(full=True)):
        action = parser._option_string_actions.get("--sandbox")
        if action is None:
            continue
        seen += 1
        assert list(action.choices or []) == ["fork", "spawn"] or action.metavar == "{fork,spawn}"
        assert action.help
    assert seen >= 10


def _project_results(folder: Path) -> None:
    folder.mkdir()
    for i, data in enumerate(results()):
        (folder / f"{i}.json").write_text(json.dumps(data))


def test_log_level_before_or_after_the_subcommand(tmp_path: Path) -> None:
    _project_results(tmp_path / "r")
    for argv in (
        ["--log-level", "debug", "project", "table", str(tmp_path / "r")],
        ["project", "table", str(tmp_path / "r"), "--log-level", "debug"],
        ["project", "--log-level", "debug", "table", str(tmp_path / "r")],
    ):
        assert cogolf(*argv).returncode == 0, argv
    bad = cogolf("project", "table", str(tmp_path / "r"), "--log-level", "loud")
    assert bad.returncode == 2 and "invalid choice: 'loud'" in bad.stderr


def test_log_level_reaches_the_logs(tmp_path: Path) -> None:
    def info_lines(*argv: str) -> int:
        done = cogolf(*argv, "--in-process", "--holes", "1", "--replays", str(tmp_path))
        assert done.returncode == 0, done.stderr
        return sum('"level": "info"' in line for line in done.stderr.splitlines())

    assert info_lines("play") == 0  # play's own default is warning
    assert info_lines("--log-level", "info", "play") > 0
    assert info_lines("play", "--log-level", "info") > 0


def test_old_sandbox_spellings_still_work_with_a_deprecation() -> None:
    bad = cogolf("bench", "sandbox", "--modes", "nope")
    assert bad.returncode == 2
    assert "--modes is deprecated" in bad.stderr and "unknown mode 'nope'" in bad.stderr
    bad = cogolf("doctor", "--sandbox", "nope")
    assert bad.returncode == 2 and "unknown mode 'nope'" in bad.stderr
    both = cogolf("doctor", "--sandbox", "both", "--json")
    assert "--sandbox both is deprecated" in both.stderr
    assert [s["mode"] for s in json.loads(both.stdout)["sandboxes"]] == ["fork", "spawn"]
    one = cogolf("doctor", "--sandbox", "spawn", "--json")
    assert [s["mode"] for s in json.loads(one.stdout)["sandboxes"]] == ["spawn"]
    assert one.stderr == ""


def test_one_spelling_per_benchmark() -> None:
    assert "bench" not in cogolf("golf", "--help").stdout.split("options:")[0]
    assert "bench" not in cogolf("league", "--help").stdout.split("options:")[0]
    listed = cogolf("bench", "--help").stdout
    assert "golf" in listed and "league" in listed and "startup" in listed
    old = cogolf("golf", "bench", "--courses", "cobol")
    assert "`cogolf golf bench` is deprecated: use `cogolf bench golf`" in old.stderr


def test_project_table_aligned_tsv_and_json(tmp_path: Path) -> None:
    _project_results(tmp_path / "r")
    text = cogolf("project", "table", str(tmp_path / "r")).stdout.splitlines()
    assert "\t" not in "\n".join(text)
    header, rule = text[0], text[1]
    assert header.split() == ["entrant", *[w for t in TASKS for w in (t, "(/5)")], "total", "(/20)"]
    assert set(rule.replace(" ", "")) == {"-"}
    # aligned: every cell of a column starts where its header starts
    total_at = header.index("total")
    assert text[2][total_at:].strip() == "20.00" and text[3][total_at:].strip() == "0.50"
    tsv = cogolf("project", "table", "--tsv", str(tmp_path / "r")).stdout.splitlines()
    assert tsv[1].split("\t") == ["alice", "5.00", "5.00", "5.00", "5.00", "20.00"]
    rows = json.loads(cogolf("project", "table", "--json", str(tmp_path / "r")).stdout)
    assert [r["entrant"] for r in rows] == ["alice", "bob"]
    both = cogolf("project", "table", "--json", "--tsv", str(tmp_path / "r"))
    assert both.returncode == 2 and "not allowed with" in both.stderr


def test_commit0_table_aligned_tsv_and_json(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    for entrant, passed in (("a-long-entrant-name", 3), ("b", 1)):
        doc = Commit0Result("textkit", entrant, "ok", passed, 4).to_json()
        (tmp_path / "r" / f"{entrant}.json").write_text(json.dumps(doc))
    text = cogolf("commit0", "table", str(tmp_path / "r")).stdout.splitlines()
    assert text[0].split() == ["entrant", "mean", "textkit"]
    assert text[2].split() == ["a-long-entrant-name", "0.750", "0.750"]
    assert text[0].index("mean") == text[2].index("0.750") + 1  # right-aligned numbers
    tsv = cogolf("commit0", "table", "--tsv", str(tmp_path / "r")).stdout.splitlines()
    assert tsv[2].split("\t") == ["b", "0.250", "0.250"]
    rows = json.loads(cogolf("commit0", "table", "--json", str(tmp_path / "r")).stdout)
    assert rows[0]["entrant"] == "a-long-entrant-name"


def test_output_piped_into_head_ends_quietly() -> None:
    """A real pipe whose reader leaves after the first line: no traceback."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cogolf", "schema"],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    assert proc.stdout is not None and proc.stderr is not None
    assert proc.stdout.readline() == b"{\n"
    proc.stdout.close()  # the schema is larger than a pipe's buffer: the next write breaks
    err = proc.stderr.read()
    assert proc.wait(timeout=60) == 141
    assert err == b""


def test_the_other_table_commands_print_json(tmp_path: Path) -> None:
    from cogolf.games.golf.results import write_result
    from tests.games.golf.test_leaderboard import doc, hole

    write_result(tmp_path, doc("alpha", "python", [hole("reverse-string", 19, 12, 12)]))
    board = cogolf("golf", "leaderboard", str(tmp_path), "--courses", "python", "--json")
    assert board.returncode == 0, board.stderr
    assert json.loads(board.stdout)["courses"]["python"][0]["model"] == "alpha"
    night = cogolf("league", "check", str(ROOT / "league" / "example.toml"), "--json")
    assert night.returncode == 0, night.stderr
    schedule = json.loads(night.stdout)
    assert schedule["night"] == "example"
    n = len(schedule["entrants"])
    assert len(schedule["matches"]) == n * (n - 1)


def test_a_hostile_entrant_name_cannot_break_a_table(tmp_path: Path) -> None:
    (tmp_path / "r").mkdir()
    for entrant in ("ok", "evil\x1b[2J\tname\nnext"):
        doc = Commit0Result("textkit", entrant, "ok", 1, 2).to_json()
        (tmp_path / "r" / f"{len(entrant)}.json").write_text(json.dumps(doc))
    for form in ((), ("--tsv",)):
        out = cogolf("commit0", "table", *form, str(tmp_path / "r")).stdout
        assert "\x1b" not in out
        lines = out.splitlines()
        assert len(lines) == (4 if not form else 3)  # header, (rule,) two rows
        assert any(line.startswith("evil[2J name next") for line in lines)


def test_golf_help_explains_the_tables_columns() -> None:
    text = cogolf("golf", "--help").stdout
    for column in ("Raw Bytes", "Penalty", "Correctness", "official bytes", "Holes Passed"):
        assert column in text.split("the tables' columns:")[1]


def test_the_scorecard_keeps_whole_aliases_and_words_for_fallbacks(tmp_path: Path) -> None:
    bad = tmp_path / "bad.py"
    bad.write_text("def play(observation):\n    raise RuntimeError('no')\n")
    done = cogolf(
        "play", "--in-process", "--holes", "2", "--seat1", f"{bad}:play",
        "--replays", str(tmp_path / "r"),
    )  # fmt: skip
    assert done.returncode == 0, done.stderr
    card = done.stdout
    header = next(line for line in card.splitlines() if line.strip().startswith("hole"))
    assert header.split()[2:10] == ["Ash", "Basil"] * 4
    assert "fallbacks 2 (host_error 2)" in card and "{" not in card
    assert "par fails:" in card and "illegal:" in card  # the legend


def test_doctor_shows_what_league_bots_need_and_ends_with_a_verdict():
    done = cogolf("doctor", "--sandbox", "spawn")
    assert done.returncode == 0, done.stderr
    lines = done.stdout.splitlines()
    head = lines.index("league bot walls (every bot process of a night):")
    needs = [line.split()[0] for line in lines[head + 1 : -1]]
    assert needs == ["root", "cgroups", "landlock", "bot", "packages"]  # "bot interpreter"
    assert lines[-1] == "verdict: OK: the sandbox holds every wall; league bots run walled"
    from cogolf.commands.doctor import _verdict

    weak = [{"mode": "fork", "walls": {"seccomp": "missing: off"}, "checks": []}]
    assert _verdict(weak, False, [{"need": "root", "ok": False, "detail": ""}]) == (
        "verdict: WEAK: the sandbox (fork) is weaker than designed here, so the server refuses "
        "to run unless started with --accept-weak-sandbox; league bots run without their walls "
        "(missing: root)"
    )


def test_ladder_orphan_seconds_goes_down_to_the_stale_time_and_no_lower(tmp_path: Path) -> None:
    from cogolf.ladder.store import ORPHAN_SECONDS, STALE_SECONDS

    helped = " ".join(cogolf("serve", "--help").stdout.split())
    bounds = f"at least the {STALE_SECONDS:g} s after which its bots count as gone"
    assert f"{bounds} (default {ORPHAN_SECONDS:g})" in helped  # the help's numbers are the code's
    first_refused = math.nextafter(STALE_SECONDS, 0.0)
    for value in (repr(first_refused), "0", "-60", "nan", "inf"):
        # A value let through would serve until the timeout: the test fails then too.
        done = cogolf("serve", "--port", "0", "--data", str(tmp_path / "data"),
                      "--ladder-orphan-seconds", value, timeout=30)  # fmt: skip
        assert done.returncode == 2, (value, done.stderr)
        assert done.stderr.splitlines()[-1] == (
            "cogolf: --ladder-orphan-seconds must be a finite number of seconds, at least the "
            f"stale time, {STALE_SECONDS:g} s (got {float(value)!r})"
        )
    last_accepted = f"{STALE_SECONDS:g}"
    proc, url = start_serve("--data", str(tmp_path / "data"),
                            "--ladder-orphan-seconds", last_accepted)  # fmt: skip
    try:
        with urllib.request.urlopen(f"{url}/ladder/standings.json", timeout=30) as answer:
            assert json.loads(answer.read())["bots"] == []  # its ladder is served
    finally:
        proc.terminate()
        proc.wait(30)
