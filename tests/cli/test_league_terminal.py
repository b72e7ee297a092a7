"""`league run` on a terminal: log lines never share a line with the progress bar,
and the standings say who an entrant is tied with (issue 18) and who has too few matches
to say (issue 22)."""

from __future__ import annotations

import json
import os
import pty
import re
import select
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

NIGHT = """\
name = "tty"
seed = 3
holes = 1
parallel = 1  # one match at a time: the second logs while the bar shows 1/2

[[entrant]]
name = "lit"
policy = "literalist"

[[entrant]]
name = "ped"
policy = "pedant"
"""


def screen(raw: str) -> list[str]:
    """The lines a terminal shows for `raw`: \\r returns to the start of the line,
    ESC[2K clears it, other escape sequences (colours) draw nothing."""
    lines: list[str] = []
    line: list[str] = []
    col = 0
    i = 0
    while i < len(raw):
        ch = raw[i]
        if ch == "\x1b":
            end = re.match(r"\x1b\[[0-9;]*[A-Za-z]", raw[i:])
            seq = end.group(0) if end else ch
            if seq == "\x1b[2K":
                line = []
            i += len(seq)
            continue
        if ch == "\r":
            col = 0
        elif ch == "\n":
            lines.append("".join(line))
            line, col = [], 0
        else:
            if col < len(line):
                line[col] = ch
            else:
                line.append(ch)
            col += 1
        i += 1
    if line:
        lines.append("".join(line))
    return lines


def run_on_a_terminal(argv: list[str], cwd: Path, timeout: float = 180) -> str:
    leader, follower = pty.openpty()
    proc = subprocess.Popen(
        argv,
        stdin=subprocess.DEVNULL,
        stdout=follower,
        stderr=follower,
        cwd=cwd,
        env={**os.environ, "COLUMNS": "200"},
    )
    os.close(follower)
    out = b""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        ready, _, _ = select.select([leader], [], [], 0.5)
        if ready:
            try:
                chunk = os.read(leader, 65536)
            except OSError:  # the process is gone and the terminal closed
                break
            if not chunk:
                break
            out += chunk
        elif proc.poll() is not None:
            break
    proc.wait(timeout=30)
    os.close(leader)
    assert proc.returncode in (0, 1), out.decode(errors="replace")
    return out.decode(errors="replace")


def test_log_lines_stay_off_the_progress_bar() -> None:
    folder = Path(tempfile.mkdtemp(prefix="cogolf-tty-"))  # bots must be able to read it
    try:
        folder.chmod(0o755)
        (folder / "tty.toml").write_text(NIGHT)
        raw = run_on_a_terminal(
            [
                sys.executable,
                "-m",
                "cogolf",
                "league",
                "run",
                "tty.toml",
                "--log-level",
                "info",
                "--no-verify",
            ],
            folder,
        )
        doc = json.loads((folder / "league" / "tty" / "standings.json").read_text())
    finally:
        shutil.rmtree(folder)
    shown = screen(raw.replace("\r\n", "\n"))
    # Two matches each: the intervals are wide, and the table says too few to tell.
    rated = doc["games"]["cogolf"]["ratings"]["entrants"]
    assert [r["too_few_matches"] for r in rated] == [True, True]
    ped = next(r for r in rated if r["name"] == "ped")  # lit is the anchor: 1000 by definition
    assert ped["low"] < 1000 < ped["high"] and ped["high"] - ped["low"] > 600
    rows = [line for line in shown if re.match(r"\s*\d=?\s+(lit|ped)\s+\d+\.\d\s", line)]
    assert len(rows) == 2 and all("too few matches" in line for line in rows), shown
    assert any("too few matches: under 4 scored matches" in line for line in shown)
    bars = [line for line in shown if re.search(r"\[[#-]{24}\] \d+/2", line)]
    logs = [line for line in shown if "[info" in line or "[warning" in line]
    assert bars and logs, shown
    mixed = [line for line in shown if line in bars and ("[info" in line or "[warn" in line)]
    assert mixed == []
    assert bars[-1].startswith("[########################] 2/2")


TIES = """\
name = "ties"
seed = 4
holes = 1

[[entrant]]
name = "lit"
policy = "literalist"

[[entrant]]
name = "twin"
policy = "literalist"

[[entrant]]
name = "ped"
policy = "pedant"
"""


def test_standings_name_who_is_tied_with_whom() -> None:
    """ "Tied" means what the README says: the two 95% intervals overlap. The table
    names, for every entrant, the entrants it is tied with."""
    folder = Path(tempfile.mkdtemp(prefix="cogolf-ties-"))
    try:
        folder.chmod(0o755)
        (folder / "ties.toml").write_text(TIES)
        done = subprocess.run(
            [sys.executable, "-m", "cogolf", "league", "run", "ties.toml", "--no-verify"],
            capture_output=True,
            text=True,
            cwd=folder,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        doc = json.loads((folder / "league" / "ties" / "standings.json").read_text())
    finally:
        shutil.rmtree(folder)
    rated = {r["name"]: r for r in doc["games"]["cogolf"]["ratings"]["entrants"]}
    for name, row in rated.items():
        overlapping = [
            other
            for other, o in rated.items()
            if other != name and o["low"] <= row["high"] and row["low"] <= o["high"]
        ]
        assert sorted(row["tied_with"]) == sorted(overlapping)
    assert any(r["tied_with"] for r in rated.values())  # this night has ties to show
    assert "br+ breaches made" in done.stdout and "par: hidden par cases" in done.stdout
    assert "too few matches" not in done.stdout  # four matches each
    assert not any(r["too_few_matches"] for r in rated.values())
    table = done.stdout.split("Ratings")[1].split("Head to head")[0].splitlines()
    header = next(line for line in table if line.startswith("#"))
    at = header.index("tied with")
    for line in table:
        if line[:1].isdigit():
            name = line.split()[1]
            assert line[at:].strip() == (", ".join(rated[name]["tied_with"]) or "-")
            assert line.split()[0].endswith("=") == bool(rated[name]["tied_with"])
