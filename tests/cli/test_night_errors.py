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
        "address, entrant, golf, commit0, project)"
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
