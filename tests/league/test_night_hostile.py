"""Hostile nights, run the way an operator runs them (`cogolf league run / standings`).

Bots that spy on the night, bots that die before connecting, edited replays, forged
cache entries and forged solo results: each is caught, listed with its reason and
never counted.
"""

from __future__ import annotations

import json
import os
import shutil
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cogolf.league.botwall import bot_python
from cogolf.league.proof import CACHE_NAME, KEY_NAME

REPO = Path(__file__).resolve().parents[2]
GOLF_SOLUTIONS = REPO / "tests" / "games" / "golf" / "solutions" / "python"
SECRET = "hunter2-operator-secret"

SPY = """\
import os, socket, sys

night, port, workdir = sys.argv[1], int(sys.argv[2]), os.getcwd()


def attempt(label, fn):
    try:
        fn()
        print(f"PROBE {label}: allowed", flush=True)
    except Exception as exc:
        print(f"PROBE {label}: denied {type(exc).__name__}", flush=True)


attempt("list-night", lambda: os.listdir(night))
attempt("read-manifest", lambda: open(os.path.join(night, "night.json")).read())
attempt("read-key", lambda: open(os.path.join(night, ".key"), "rb").read())
attempt("write-night", lambda: open(os.path.join(night, "planted.json"), "w").write("{}"))
attempt("write-workdir", lambda: open(os.path.join(workdir, "planted.txt"), "w").write("x"))
attempt("read-references", lambda: os.listdir(sys.argv[3]))
attempt("connect-other", lambda: socket.create_connection(("127.0.0.1", port), timeout=2))
print("PROBE secret:", os.environ.get("COGOLF_TEST_SECRET", "absent"), flush=True)
print("PROBE env:", sorted(os.environ), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cogolf", "bot", "--policy", "literalist"])
"""

BROKEN = """\
import sys

import websockets  # not installed for this interpreter: dies before connecting

print("never here", sys.argv)
"""


def league(
    *args: str, cwd: Path, env: dict[str, str] | None = None
) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", "league", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=900,
        check=False,
        env={**os.environ, **(env or {})},
    )


@pytest.fixture(scope="module")
def hostile_night() -> Iterator[dict[str, Any]]:
    """One real night: literalist, a spying command bot, a bot that cannot import websockets.

    Everything lives in a folder every user may read (pytest's own is private to root),
    so only the night's own walls keep the bots out of its folder."""
    base = Path(tempfile.mkdtemp(prefix="cogolf-hostile-"))
    os.chmod(base, 0o755)
    try:
        yield _run_hostile(base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _run_hostile(base: Path) -> dict[str, Any]:
    night_dir = base / "replays" / "hostile"
    (base / "spy.py").write_text(SPY)
    (base / "broken.py").write_text(BROKEN)
    probe = socket.socket()
    probe.bind(("127.0.0.1", 0))
    probe.listen(8)
    probe.setblocking(False)
    python = bot_python()
    refs = REPO / "references" / "core"
    night = base / "hostile.toml"
    night.write_text(f"""\
name = "hostile"
seed = 3
holes = 1
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "spy"
command = ["{python}", "spy.py", "{night_dir}", "{probe.getsockname()[1]}", "{refs}"]

[[entrant]]
name = "broken"
command = "python3 broken.py {{url}}"
env = {{ PYTHONPATH = "" }}
""")
    run = league(
        "run",
        str(night),
        "--replays",
        str(base / "replays"),
        "--league-dir",
        str(base / "league"),
        cwd=base,
        env={"COGOLF_TEST_SECRET": SECRET},
    )
    try:
        probe.accept()
        connected = True
    except BlockingIOError:
        connected = False
    probe.close()
    standings = json.loads((base / "league" / "hostile" / "standings.json").read_text())
    return {
        "base": base,
        "run": run,
        "dir": night_dir,
        "standings": standings,
        "probe_connected": connected,
    }


def spy_log(night: dict[str, Any]) -> str:
    logs = sorted((night["dir"] / "logs").glob("*.spy.log"))
    # The spy plays both its matches against the literalist; against the broken bot it
    # may never start (a match whose other bot dies before connecting ends at once).
    names = {p.name for p in logs}
    assert {"hostile-spy-vs-literalist.spy.log", "hostile-literalist-vs-spy.spy.log"} <= names
    return "\n".join(p.read_text() for p in logs)


def test_the_night_folder_and_its_key_are_closed_to_bots(hostile_night: dict[str, Any]):
    assert os.stat(hostile_night["dir"]).st_mode & 0o777 == 0o700
    assert os.stat(hostile_night["dir"] / KEY_NAME).st_mode & 0o777 == 0o600
    log = spy_log(hostile_night)
    for probe in ("list-night", "read-manifest", "read-key", "write-night"):
        assert f"PROBE {probe}: denied PermissionError" in log
        assert f"PROBE {probe}: allowed" not in log
    assert not (hostile_night["dir"] / "planted.json").exists()


def test_a_bot_cannot_write_its_folder_nor_read_the_references(hostile_night: dict[str, Any]):
    log = spy_log(hostile_night)
    assert "PROBE write-workdir: denied" in log and "PROBE read-references: denied" in log
    assert not (hostile_night["base"] / "planted.txt").exists()


def test_a_bot_sees_none_of_the_operators_environment(hostile_night: dict[str, Any]):
    log = spy_log(hostile_night)
    assert SECRET not in log and "PROBE secret: absent" in log
    env_line = next(line for line in log.splitlines() if line.startswith("PROBE env:"))
    names = set(json.loads(env_line.removeprefix("PROBE env: ").replace("'", '"')))
    assert names == {
        "COGOLF_URL",
        "HOME",
        "LANG",
        "PATH",
        "PYTHONDONTWRITEBYTECODE",
        "PYTHONPATH",
        "TMPDIR",
    }


def test_a_bot_reaches_only_the_nights_server(hostile_night: dict[str, Any]):
    log = spy_log(hostile_night)
    assert "PROBE connect-other: denied" in log and "PROBE connect-other: allowed" not in log
    assert not hostile_night["probe_connected"]
    # ...and still plays its matches through the one port it has.
    table = {r["name"]: r for r in hostile_night["standings"]["games"]["cogolf"]["table"]}
    assert table["spy"]["matches"] == 2 and table["spy"]["void"] == 2


def test_a_bot_that_dies_before_connecting_says_why(hostile_night: dict[str, Any]):
    run = hostile_night["run"]
    assert run.returncode == 1
    assert "before connecting (broken)" in run.stderr
    assert "ModuleNotFoundError: No module named 'websockets'" in run.stderr
    logs = sorted((hostile_night["dir"] / "logs").glob("*.broken.log"))
    assert logs and all("No module named 'websockets'" in p.read_text() for p in logs)
    # One line per void match: the cause, the log's last line and where the log is; the
    # traceback stays in the log (and the void marker), not around the progress.
    voids = [ln for ln in run.stderr.splitlines() if " void (" in ln]
    assert len(voids) == 4 and "Traceback" not in run.stderr, run.stderr
    for line in voids:
        mid = line.split()[1]
        seat = 0 if mid.startswith("hostile-broken-vs-") else 1
        log = hostile_night["dir"] / "logs" / f"{mid}.broken.log"
        assert line.startswith(
            f"match {mid} void (seat {seat}: bot exited with code 1 before connecting (broken): "
            f"ModuleNotFoundError: No module named 'websockets' (log: {log}))"
        ), line
    assert "ASGI callable" not in run.stderr  # refused late seats are no server error


def test_an_entrant_with_only_void_matches_is_unrated(hostile_night: dict[str, Any]):
    game = hostile_night["standings"]["games"]["cogolf"]
    row = next(r for r in game["table"] if r["name"] == "broken")
    assert row["rank"] is None and row["unrated"] and row["matches"] == 0 and row["void"] == 4
    assert game["table"][-1] is not None and game["table"][-1]["name"] == "broken"
    assert "broken" not in {r["name"] for r in game["ratings"]["entrants"]}
    assert game["ratings"]["unrated"] == ["broken"]
    assert "broken" not in {r["entrant"] for r in hostile_night["standings"]["combined"]["table"]}


def _forge(replay: Path, delta: int) -> None:
    """Both result lines moved by `delta` for seat 0: the last hole score and the result."""
    lines = replay.read_bytes().splitlines()
    out = []
    for raw in lines:
        rec = json.loads(raw)
        if rec.get("kind") == "hole_score":
            rec["score"] = [rec["score"][0] + delta, rec["score"][1] - delta]
            rec["cumulative"] = [rec["cumulative"][0] + delta, rec["cumulative"][1] - delta]
        elif rec.get("kind") == "result":
            rec["scores"] = [rec["scores"][0] + delta, rec["scores"][1] - delta]
            rec["hole_scores"][-1] = [
                rec["hole_scores"][-1][0] + delta,
                rec["hole_scores"][-1][1] - delta,
            ]
        out.append(json.dumps(rec, separators=(",", ":")).encode())
    replay.write_bytes(b"\n".join(out) + b"\n")


@pytest.mark.parametrize("delta", [50, -50])
def test_an_edited_replay_is_not_counted(hostile_night: dict[str, Any], tmp_path: Path, delta: int):
    folder = tmp_path / "hostile"
    shutil.copytree(hostile_night["dir"], folder)
    name = "hostile-spy-vs-literalist.ndjson"
    _forge(folder / name, delta)
    st = league("standings", str(folder), "--out", str(tmp_path / "s.json"), "--json", cwd=tmp_path)
    assert st.returncode == 0, st.stderr
    doc = json.loads((tmp_path / "s.json").read_text())
    game = doc["games"]["cogolf"]
    assert game["matches"]["played"] == 1
    assert "hostile-spy-vs-literalist" not in {r["match_id"] for r in game["results"]}
    assert any(p.startswith(f"{name}: does not verify, not counted") for p in doc["problems"])
    table = {r["name"]: r for r in game["table"]}
    assert table["spy"]["matches"] == 1
    honest = {r["name"]: r for r in hostile_night["standings"]["games"]["cogolf"]["table"]}
    assert table["spy"]["score_for"] <= honest["spy"]["score_for"] or delta < 0


def test_verdicts_are_cached_and_a_forged_cache_entry_is_ignored(
    hostile_night: dict[str, Any], tmp_path: Path
):
    folder = tmp_path / "hostile"
    shutil.copytree(hostile_night["dir"], folder)
    name = "hostile-spy-vs-literalist.ndjson"
    cache = json.loads((folder / CACHE_NAME).read_text())
    assert set(cache) == {name, "hostile-literalist-vs-spy.ndjson"}
    # Recomputing the untouched folder re-resolves nothing and gives the same bytes.
    out = tmp_path / "again.json"
    st = league("standings", str(folder), "--out", str(out), cwd=tmp_path)
    assert st.returncode == 0, st.stderr
    assert (
        out.read_bytes()
        == (hostile_night["base"] / "league" / "hostile" / "standings.json").read_bytes()
    )
    # The forger edits the replay and rewrites its cache entry to match: still not counted.
    _forge(folder / name, 50)
    import hashlib

    cache[name]["sha256"] = hashlib.sha256((folder / name).read_bytes()).hexdigest()
    (folder / CACHE_NAME).write_text(json.dumps(cache))
    st = league("standings", str(folder), "--out", str(out), cwd=tmp_path)
    doc = json.loads(out.read_text())
    assert any(p.startswith(f"{name}: does not verify") for p in doc["problems"])
    assert doc["games"]["cogolf"]["matches"]["played"] == 1


def test_standings_of_a_folder_without_its_key_count_no_solo_result_and_still_verify(
    hostile_night: dict[str, Any], tmp_path: Path
):
    folder = tmp_path / "hostile"
    shutil.copytree(hostile_night["dir"], folder)
    (folder / KEY_NAME).unlink()
    (folder / CACHE_NAME).unlink()
    out = tmp_path / "nokey.json"
    st = league("standings", str(folder), "--out", str(out), cwd=tmp_path)
    assert st.returncode == 0, st.stderr
    doc = json.loads(out.read_text())
    assert doc["games"]["cogolf"]["matches"]["played"] == 2  # re-resolved, both verify
    # Its plan cannot be checked without the key either: the night is unplanned, and says so.
    assert doc["games"]["cogolf"]["plan"] is None
    assert any(p.startswith("plan.json: the signature does not match") for p in doc["problems"])
    assert (folder / KEY_NAME).stat().st_mode & 0o777 == 0o600


# --- solo results --------------------------------------------------------------------


@pytest.fixture(scope="module")
def golf_night(tmp_path_factory: pytest.TempPathFactory) -> dict[str, Any]:
    base = Path(tmp_path_factory.mktemp("golfnight"))
    subs = base / "subs"
    for who, holes in (
        ("alice", ("reverse-string", "palindrome", "sum-digits")),
        ("bob", ("reverse-string",)),
    ):
        (subs / who).mkdir(parents=True)
        for hole in holes:
            shutil.copy(GOLF_SOLUTIONS / f"{hole}.py", subs / who / f"{hole}.py")
    night = base / "golf.toml"
    night.write_text("""\
name = "golfn"
seed = 4
holes = 1
parallel = 2

[golf]
courses = ["python"]

[[entrant]]
name = "alice"
policy = "literalist"
golf = "subs/alice"

[[entrant]]
name = "bob"
policy = "pedant"
golf = "subs/bob"
""")
    args = (
        "run",
        str(night),
        "--replays",
        str(base / "replays"),
        "--league-dir",
        str(base / "league"),
    )
    run = league(*args, cwd=base)
    assert run.returncode == 0, run.stderr[-3000:]
    return {"base": base, "args": args, "dir": base / "replays" / "golfn"}


def test_a_forged_solo_result_is_not_counted_then_scored_again(golf_night: dict[str, Any]):
    folder = golf_night["dir"]
    bob = folder / "golf" / "bob.python.golfn.json"
    honest = json.loads(bob.read_text())
    forged = json.loads(bob.read_text())
    forged["totals"]["score"] = 9999.0
    forged["totals"]["holes_passed"] = forged["totals"]["holes_total"]
    bob.write_text(json.dumps(forged))
    base = golf_night["base"]
    out = base / "forged.json"
    st = league("standings", str(folder), "--out", str(out), cwd=base)
    assert st.returncode == 0, st.stderr
    doc = json.loads(out.read_text())
    assert (
        "golf/bob.python.golfn.json: the signature does not match: edited after the runner "
        "wrote it; not counted"
    ) in doc["problems"]
    assert "9999" not in json.dumps(doc["games"]["golf"])
    # The next run does not keep it: it scores bob again and signs the honest result.
    again = league(*golf_night["args"], cwd=base)
    assert again.returncode == 0, again.stderr[-3000:]
    assert "1 played, 1 kept" in again.stderr
    assert json.loads(bob.read_text())["totals"] == honest["totals"]
    doc = json.loads((base / "league" / "golfn" / "standings.json").read_text())
    assert not doc["problems"]


def test_an_unsigned_or_copied_solo_result_is_not_counted(golf_night: dict[str, Any], tmp_path):
    folder = tmp_path / "golfn"
    shutil.copytree(golf_night["dir"], folder)
    (folder / "golf" / "alice.python.golfn.json.sig").unlink()
    out = tmp_path / "s.json"
    st = league("standings", str(folder), "--out", str(out), cwd=tmp_path)
    assert st.returncode == 0, st.stderr
    doc = json.loads(out.read_text())
    assert (
        "golf/alice.python.golfn.json: not signed by this night's runner (no signature); "
        "not counted"
    ) in doc["problems"]
    assert "alice" not in json.dumps(doc["games"]["golf"])


def test_a_bots_log_keeps_only_its_tail(bot_dir: Path):
    """A bot that floods its output leaves a capped log, ending with its last lines."""
    from cogolf.league.botwall import LOG_CAP, BotWall, wrap

    (bot_dir / "flood.py").write_text(
        "import sys\nfor i in range(200_000):\n    print('line', i)\nsys.exit(3)\n"
    )
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    log = bot_dir / "flood.log"
    wall = BotWall(cwd=str(bot_dir), log=str(log))
    url = f"ws://127.0.0.1:{server.getsockname()[1]}/x"
    argv = wrap([bot_python(), "flood.py"], wall)
    run = subprocess.run(argv, env={**os.environ, "COGOLF_URL": url}, timeout=120, check=False)
    server.close()
    assert run.returncode == 3
    text = log.read_text()
    assert len(text) <= LOG_CAP + 100
    assert text.startswith("[cogolf] ") and "earlier bytes dropped" in text.splitlines()[0]
    assert text.rstrip().endswith("line 199999")


def test_a_published_void_match_says_why(hostile_night: dict[str, Any], tmp_path: Path):
    site = tmp_path / "site"
    run = league("publish", str(hostile_night["dir"]), "--out", str(site), cwd=tmp_path)
    assert run.returncode == 0, run.stderr  # its standings found from the night itself
    voids = [v["match_id"] for v in hostile_night["standings"]["games"]["cogolf"]["void"]]
    assert voids
    for mid in voids:
        page = (site / "matches" / f"{mid}.html").read_text()
        assert "This match does not count" in page and "before connecting" in page
        assert f'href="matches/{mid}.html"' in (site / "index.html").read_text()
