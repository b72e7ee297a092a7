"""A night file's problems are all reported at once, in line order (issue 18)."""

from __future__ import annotations

import shutil
import tempfile
from pathlib import Path

from tests.cli.run import cogolf

MANY = """\
name = "bad name!"
seed = 5
holes = 0
colour = "blue"

[golf]
courses = ["cobol", "python", "python"]

[[entrant]]
name = "lit"
policy = "literalist"
shoe = 9

[[entrant]]
name = "lit"
policy = "no such thing"

[[entrant]]
name = "c"
command = []
env = {COGOLF_URL = "x"}
"""


def test_every_field_problem_at_once_in_line_order(tmp_path: Path) -> None:
    night = tmp_path / "night.toml"
    night.write_text(MANY)
    done = cogolf("league", "check", str(night))
    assert done.returncode == 2 and "Traceback" not in done.stderr
    lines = done.stderr.splitlines()
    assert lines[0] == f"cogolf: {night}: 10 problems"
    found = [line.strip().removeprefix(f"{night}:") for line in lines[1:]]
    assert [f.split(":")[0] for f in found] == [
        "1",
        "3",
        "4",
        "7",
        "7",
        "12",
        "15",
        "16",
        "20",
        "21",
    ]
    joined = "\n".join(found)
    for words in (
        "name: 'bad name!'",
        "holes: must be between 1 and 99",
        "colour: unknown field",
        "unknown course 'cobol'",
        "'python' is listed twice",
        "shoe: unknown field",
        "'lit' is already the name of entrant[0]",
        "entrant[1].policy",
        "entrant[2].command: is empty",
        "COGOLF_URL is set by the night",
    ):
        assert words in joined, words


def test_one_problem_reads_as_before(tmp_path: Path) -> None:
    night = tmp_path / "night.toml"
    night.write_text(
        MANY.split("[golf]")[0].replace('"bad name!"', '"n"').replace("holes = 0\n", "")
        + '[[entrant]]\nname = "a"\npolicy = "literalist"\n'
        '[[entrant]]\nname = "b"\npolicy = "pedant"\n'
    )
    done = cogolf("league", "check", str(night))
    assert done.returncode == 2
    assert done.stderr.strip() == (
        f"cogolf: {night}:3: colour: unknown field (expected one of: name, seed, holes, "
        "hole_deadline, retry_deadline, match_deadline, deck, references, executor, parallel, "
        "address, schedule, budget, entrant, golf, commit0, project)"
    )


def test_every_policy_that_does_not_load_at_once() -> None:
    # Bots run unprivileged: the night's folder must be one every user can read.
    folder = Path(tempfile.mkdtemp(prefix="cogolf-night-"))
    try:
        folder.chmod(0o755)
        (folder / "bots.py").write_text("def fine(observation):\n    return {}\n")
        (folder / "bots.py").chmod(0o644)
        night = folder / "night.toml"
        night.write_text(
            'name = "n"\nseed = 1\nholes = 1\n'
            '[[entrant]]\nname = "a"\npolicy = "bots.py:missing"\n'
            '[[entrant]]\nname = "b"\npolicy = "bots.py:fine"\n'
            '[[entrant]]\nname = "c"\npolicy = "bots.py:gone"\n'
        )
        done = cogolf("league", "check", str(night))
        assert done.returncode == 2, done.stderr
        lines = done.stderr.splitlines()
        assert lines[0] == f"cogolf: {night}: 2 problems"
        assert lines[1].startswith(f"  {night}:6: entrant[0].policy") and "missing" in lines[1]
        assert lines[2].startswith(f"  {night}:12: entrant[2].policy") and "gone" in lines[2]
    finally:
        shutil.rmtree(folder)


TRIPS = """\
name = "n"
seed = 1
holes = 1

[golf]
coures = ["python"]

[[entrant]]
name = "a"
policy = "literalist"
golf = "subs/a/{{course}}/"

[[entrant]]
name = "b"
workdir = "bots/b"
command = "python3 bot.py --url {{url --seat {{slot}}"

[[entrant]]
name = "c"
workdir = "bots/b"
command = "python3 bot.py ../../secret.txt {{url}}"

[[entrant]]
name = "d"
policy = "top.py:play"
"""

TOP_LEVEL = """\
open({planted!r}, "w").write("ran in the operator's process")
def play(observation):
    return {{}}
"""


def test_check_finds_what_run_would_trip_on_and_runs_no_policy_code_of_its_own() -> None:
    """A misspelt key in [golf] is that and only that; a command's placeholders are checked;
    a file a walled bot cannot read is named; a policy file's top-level code runs behind the
    bot's walls (where it cannot write beside the night), never in the operator's process."""
    folder = Path(tempfile.mkdtemp(prefix="cogolf-night-"))
    try:
        folder.chmod(0o755)
        (folder / "bots" / "b").mkdir(parents=True, mode=0o755)
        (folder / "bots").chmod(0o755)
        (folder / "bots" / "b" / "bot.py").write_text("print('bot')\n")
        (folder / "secret.txt").write_text("the operator's\n")
        planted = folder / "planted.txt"
        (folder / "top.py").write_text(TOP_LEVEL.format(planted=str(planted)))
        for f in ("bots/b/bot.py", "secret.txt", "top.py"):
            (folder / f).chmod(0o644)
        night = folder / "night.toml"
        night.write_text(TRIPS.format())
        done = cogolf("league", "check", str(night))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert not planted.exists()  # the policy's code never ran here
        warning, head, *problems = done.stderr.splitlines()
        assert warning == (
            f"warning: {night}:21: entrant[2].command: ../../secret.txt: bots run as an "
            "unprivileged user and read only the system, the packages and their working "
            "folder: move it into `workdir`"
        )
        assert head == f"cogolf: {night}: 4 problems"
        assert problems == [
            f"  {night}:6: golf.coures: unknown field (did you mean 'courses'?) (expected one "
            "of: courses, per_test_seconds, per_hole_seconds)",
            f"  {night}:16: entrant[1].command: '{{url': the placeholder {{url is not closed "
            "(write {url} or {python})",
            f"  {night}:16: entrant[1].command: '{{slot}}': unknown placeholder {{slot}} "
            "(allowed: {url}, {python})",
            f"  {night}:25: entrant[3].policy: policy '{folder / 'top.py'}:play': "
            f"{folder / 'top.py'} raised PermissionError: [Errno 13] Permission denied: "
            f"'{planted}'",
        ]
        assert "no [golf] section" not in done.stderr
    finally:
        shutil.rmtree(folder)
