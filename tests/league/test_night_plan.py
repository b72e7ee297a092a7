"""Only the night's schedule counts: a night nobody can pad, through the CLI.

A `command` bot that tries what won a night on an older version (`POST /matches`
through its relay, then playing both seats of matches it named) and every other
door of the server (the match list, another match's watch and seats, the night's
folder), then plays honestly; and the same night with that entrant honest from the
start, on the same seeds. The two nights' standings are the same bytes. Then the
test, as someone who can write the night's folder, drops forged replays in (real,
verifying replays of matches that were never planned, or planned with another
seed, or with the seats swapped, and a copy of a played one): each is listed with
its reason and none is counted; with the plan removed the same folder would have
counted them, and says the night is unplanned.
"""

from __future__ import annotations

import asyncio
import html
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import httpx
import pytest

from cogolf.league.checks import check_night
from cogolf.league.host import NightHost
from cogolf.league.night import parse_night
from cogolf.league.planfile import PLAN_NAME, load_plan
from cogolf.league.proof import night_key
from cogolf.league.schedule import schedule

NIGHT = "pn"
HOSTILE = """\
import json, os, socket, subprocess, sys
from urllib.parse import urlsplit

url, night_dir = sys.argv[1], sys.argv[2]
u = urlsplit(url)
night = os.path.basename(night_dir.rstrip("/"))
HOST = f"{u.hostname}:{u.port}"


def ask(head, body=b""):
    with socket.create_connection((u.hostname, u.port), timeout=5) as s:
        s.sendall(head.encode() + body)
        data = b""
        try:
            while chunk := s.recv(65536):
                data += chunk
        except OSError:
            pass
    return data


def status(label, data):
    line = data.split(b"\\r\\n", 1)[0].decode(errors="replace")
    print(f"PROBE {label}: {line!r}", flush=True)
    return data


UPGRADE = (f"Host: {HOST}\\r\\nUpgrade: websocket\\r\\nConnection: Upgrade\\r\\n"
           "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\\r\\nSec-WebSocket-Version: 13\\r\\n\\r\\n")
# What won a night before plans: a match of its own naming, both seats its own.
body = json.dumps({"names": ["ghost", "literalist"], "seed": 4, "holes": 2,
                   "match_id": f"{night}-ghost-vs-literalist"}).encode()
made = status("post-matches", ask(
    f"POST /matches HTTP/1.1\\r\\nHost: {HOST}\\r\\nContent-Type: application/json\\r\\n"
    f"Content-Length: {len(body)}\\r\\nConnection: close\\r\\n\\r\\n", body))
if b" 201 " in made.split(b"\\r\\n", 1)[0]:
    seats = json.loads(made.split(b"\\r\\n\\r\\n", 1)[1])["seats"]
    bots = [subprocess.Popen([sys.executable, "-m", "cogolf", "bot", "--url", s["url"],
                              "--policy", p]) for s, p in zip(seats, ("pedant", "literalist"))]
    for b in bots:
        b.wait()
status("list-matches",
       ask(f"GET /matches HTTP/1.1\\r\\nHost: {HOST}\\r\\nConnection: close\\r\\n\\r\\n"))
other = f"{night}-literalist-vs-pedant"
status("watch-other", ask(f"GET /matches/{other}/watch HTTP/1.1\\r\\n" + UPGRADE))
status("seat-other", ask(f"GET /matches/{other}/player?{u.query} HTTP/1.1\\r\\n" + UPGRADE))
slot = "slot=1" if "slot=0" in u.query else "slot=0"
query = u.query.replace("slot=0", slot).replace("slot=1", slot)
status("seat-opponent", ask(f"GET {u.path}?{query} HTTP/1.1\\r\\n" + UPGRADE))
try:
    with open(os.path.join(night_dir, f"{night}-ghost-vs-pedant.ndjson"), "w") as f:
        f.write("{}\\n")
    print("PROBE drop-replay: allowed", flush=True)
except OSError as exc:
    print(f"PROBE drop-replay: denied {type(exc).__name__}", flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cogolf", "bot", "--url", url,
                          "--policy", "literalist"])
"""
PROBES = ("post-matches", "list-matches", "watch-other", "seat-other", "seat-opponent")


def night_file(folder: Path, third: list[str]) -> Path:
    path = folder / "night.toml"
    path.write_text(f"""\
name = "{NIGHT}"
seed = 3
holes = 2
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "pedant"
policy = "pedant"

[[entrant]]
name = "hostile"
command = {json.dumps(third)}
""")
    return path


def cogolf(*args: str, cwd: Path) -> subprocess.CompletedProcess[str]:
    return subprocess.run([sys.executable, "-m", "cogolf", *args], cwd=cwd, capture_output=True,
                          text=True, timeout=600, check=False)


def run_args(folder: Path) -> list[str]:
    return [sys.executable, "-m", "cogolf", "league", "run", str(folder / "night.toml"),
            "--replays", str(folder / "replays"), "--league-dir", str(folder / "league")]


@pytest.fixture(scope="module")
def nights() -> Iterator[dict[str, Any]]:
    """The hostile night and the honest one, played at once. Everything lives in a folder
    every user may read, so only the night's walls keep the bots out of its files."""
    base = Path(tempfile.mkdtemp(prefix="cogolf-plan-"))
    os.chmod(base, 0o755)
    try:
        honest, hostile = base / "honest", base / "hostile"
        for folder in (honest, hostile):
            folder.mkdir()
        (hostile / "hostile.py").write_text(HOSTILE)
        night_file(honest, ["{python}", "-m", "cogolf", "bot", "--url", "{url}",
                            "--policy", "literalist"])
        night_file(hostile, ["{python}", "hostile.py", "{url}",
                             str(hostile / "replays" / NIGHT)])
        procs = [subprocess.Popen(run_args(f), cwd=f, stdout=subprocess.PIPE,
                                  stderr=subprocess.PIPE, text=True) for f in (honest, hostile)]
        runs = [p.communicate(timeout=600) for p in procs]
        for proc, (_, err) in zip(procs, runs, strict=True):
            assert proc.returncode == 0, err[-3000:]
        yield {
            "base": base,
            "honest": json.loads((honest / "league" / NIGHT / "standings.json").read_text()),
            "hostile": json.loads((hostile / "league" / NIGHT / "standings.json").read_text()),
            "dir": hostile / "replays" / NIGHT,
            "stdout": runs[1][0],
            "stderr": runs[1][1],
        }
    finally:
        shutil.rmtree(base, ignore_errors=True)


@pytest.mark.slow
def test_a_hostile_bot_reaches_nothing_but_its_own_seat(nights: dict[str, Any]):
    logs = sorted((nights["dir"] / "logs").glob("*.hostile.log"))
    assert len(logs) == 4  # it plays every one of its matches
    for log in logs:
        text = log.read_text()
        for probe in PROBES:
            assert f"PROBE {probe}: 'HTTP/1.1 403 Forbidden'" in text, (log.name, text[-2000:])
        assert "PROBE drop-replay: denied PermissionError" in text
        assert "relay refused 'POST /matches HTTP/1.1': only GET is forwarded" in text
    # The server made no match but the planned ones, and the folder holds only their replays.
    plan = load_plan(nights["dir"], night_key(nights["dir"]))
    assert plan is not None and plan.revision == 1 and len(plan.matches) == 6
    assert {p.name for p in nights["dir"].glob("*.ndjson")} == {
        p.replay_name for p in plan.matches}
    assert f"plan: {nights['dir'] / PLAN_NAME} (revision 1, 6 matches, 6 added by this run)" in (
        nights["stderr"])


@pytest.mark.slow
def test_the_hostile_night_ranks_exactly_as_the_honest_one(nights: dict[str, Any]):
    assert nights["hostile"] == nights["honest"]
    game = nights["hostile"]["games"]["cogolf"]
    assert game["plan"] == {"revision": 1, "matches": 6} and nights["hostile"]["problems"] == []
    assert game["matches"]["played"] == 6 and "ghost" not in json.dumps(game)
    assert "only planned matches count (plan revision 1)" in nights["stdout"]


def rename(doc: Any, old: list[str], new: list[str]) -> Any:
    """`doc` with every `names` list equal to `old` replaced by `new`."""
    if isinstance(doc, dict):
        return {k: new if k == "names" and v == old else rename(v, old, new)
                for k, v in doc.items()}
    return [rename(v, old, new) for v in doc] if isinstance(doc, list) else doc


def renamed(source: Path, target: Path, old: list[str], new: list[str]) -> None:
    lines = [json.dumps(rename(json.loads(line), old, new), separators=(",", ":"))
             for line in source.read_text().splitlines()]
    target.write_text("\n".join(lines) + "\n")


@pytest.fixture(scope="module")
def forged(nights: dict[str, Any]) -> dict[str, Any]:
    """A copy of the hostile night's folder with what a folder writer would drop into it.
    Each forgery is a real replay that verifies (checked below, with the plan removed)."""
    folder = nights["base"] / "forged" / NIGHT
    shutil.copytree(nights["dir"], folder)
    played = nights["base"] / "played"
    for match_id in (f"{NIGHT}-ghost-vs-literalist", f"{NIGHT}-hostile-vs-literalist"):
        run = cogolf("play", "--in-process", "--seed", "4", "--holes", "2", "--seat0", "pedant",
                     "--seat1", "literalist", "--match-id", match_id, "--replays", str(played),
                     cwd=nights["base"])
        assert run.returncode == 0, run.stderr[-2000:]
    files = {
        # An entrant nobody entered, beating the anchor.
        f"{NIGHT}-ghost-vs-literalist.ndjson": "is not in the night's plan",
        # A planned match on another seed.
        f"{NIGHT}-hostile-vs-literalist.reseeded.ndjson": "seed 4 here",
        # A planned match with its seats swapped.
        f"{NIGHT}-pedant-vs-hostile.swapped.ndjson":
            "names ['hostile', 'pedant'] here, ['pedant', 'hostile'] in the plan",
        # A second copy of a played match.
        f"{NIGHT}-literalist-vs-pedant.copy.ndjson": "a second replay of the planned match",
        # A void marker of a match never planned.
        f"{NIGHT}-ghost-vs-pedant.void.json": "not in the night's plan; ignored",
    }
    pair = ["pedant", "literalist"]
    renamed(played / f"{NIGHT}-ghost-vs-literalist.ndjson",
            folder / f"{NIGHT}-ghost-vs-literalist.ndjson", pair, ["ghost", "literalist"])
    renamed(played / f"{NIGHT}-hostile-vs-literalist.ndjson",
            folder / f"{NIGHT}-hostile-vs-literalist.reseeded.ndjson", pair,
            ["hostile", "literalist"])
    renamed(folder / f"{NIGHT}-pedant-vs-hostile.ndjson",
            folder / f"{NIGHT}-pedant-vs-hostile.swapped.ndjson", ["pedant", "hostile"],
            ["hostile", "pedant"])
    shutil.copy(folder / f"{NIGHT}-literalist-vs-pedant.ndjson",
                folder / f"{NIGHT}-literalist-vs-pedant.copy.ndjson")
    (folder / f"{NIGHT}-ghost-vs-pedant.void.json").write_text(json.dumps({
        "format": "cogolf-void", "match_id": f"{NIGHT}-ghost-vs-pedant",
        "names": ["ghost", "pedant"], "cause": "forged", "attempts": 2}))
    return {"dir": folder, "files": files}


@pytest.mark.slow
def test_forged_files_are_listed_with_their_reason_and_never_counted(
    nights: dict[str, Any], forged: dict[str, Any]
):
    folder = forged["dir"]
    league_dir = folder.parent / "league"
    out = league_dir / NIGHT / "standings.json"
    st = cogolf("league", "standings", str(folder), "--out", str(out), cwd=folder.parent)
    assert st.returncode == 0, st.stderr[-3000:]
    doc = json.loads(out.read_text())
    assert {k: v for k, v in doc.items() if k != "problems"} == {
        k: v for k, v in nights["honest"].items() if k != "problems"}
    assert len(doc["problems"]) == len(forged["files"])
    for name, why in forged["files"].items():
        line = next((p for p in doc["problems"] if p.startswith(f"{name}: ")), None)
        assert line is not None and why in line, (name, doc["problems"])
        assert line in st.stdout  # the CLI's Problems
    # The night page lists them too.
    site = folder.parent / "site"
    pub = cogolf("league", "publish", str(folder), "--out", str(site), "--league-dir",
                 str(league_dir), cwd=folder.parent)
    assert pub.returncode == 0, pub.stderr[-3000:]
    page = html.unescape((site / "index.html").read_text())
    assert all(p in page for p in doc["problems"])


@pytest.mark.slow
def test_without_its_plan_the_folder_would_count_them_and_says_it_is_unplanned(
    forged: dict[str, Any]
):
    folder = forged["dir"].parent / "unplanned" / NIGHT
    shutil.copytree(forged["dir"], folder)
    (folder / PLAN_NAME).unlink()
    out = folder.parent / "standings.json"
    st = cogolf("league", "standings", str(folder), "--out", str(out), cwd=folder.parent)
    assert st.returncode == 0, st.stderr[-3000:]
    doc = json.loads(out.read_text())
    game = doc["games"]["cogolf"]
    assert game["plan"] is None
    assert any(p.startswith("plan.json: missing (a night made before plans")
               for p in doc["problems"])
    assert "UNPLANNED: every replay that verifies counts" in st.stdout
    # The invented entrant verifies and counts, ahead of the anchor it beat.
    table = {r["name"]: r for r in game["table"]}
    assert table["ghost"]["wins"] == 1 and table["ghost"]["void"] == 1
    assert f"{NIGHT}-ghost-vs-literalist" in {r["match_id"] for r in game["results"]}


@pytest.mark.slow
def test_a_night_file_that_changes_the_plan_is_refused(nights: dict[str, Any]):
    folder = nights["base"] / "changed"
    shutil.copytree(nights["base"] / "hostile", folder, symlinks=True)
    night = folder / "night.toml"
    night.write_text(night.read_text().replace("holes = 2", "holes = 3"))
    before = (folder / "replays" / NIGHT / PLAN_NAME).read_bytes()
    run = subprocess.run(run_args(folder), cwd=folder, capture_output=True, text=True,
                         timeout=600, check=False)
    assert run.returncode == 2
    plan = folder / "replays" / NIGHT / PLAN_NAME
    assert f"cogolf: {plan}: planned match " in run.stderr
    assert ": holes 2 in the plan, 3 now; a started night keeps its schedule" in run.stderr
    assert "Traceback" not in run.stderr and plan.read_bytes() == before


def test_the_nights_server_creates_matches_only_for_its_runner(tmp_path: Path, bot_dir: Path):
    """No admin token, no match; and the token is nowhere a bot can look."""
    (bot_dir / "spy.py").write_text(
        "import os, sys\nprint('ENV', dict(os.environ), 'ARGV', sys.argv, flush=True)\n"
        "os.execv(sys.executable, [sys.executable, '-m', 'cogolf', 'bot', '--url', sys.argv[1],"
        " '--policy', 'literalist'])\n")
    (bot_dir / "night.toml").write_text("""\
name = "tok"
seed = 1
holes = 1

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "spy"
command = ["{python}", "spy.py", "{url}"]
""")
    night = parse_night(bot_dir / "night.toml")
    job = schedule(night, check_night(night).digest)[0]

    async def go() -> tuple[str, list[int]]:
        async with NightHost(tmp_path / "r") as host:
            await host.play(job, tmp_path / "r")
            assert host.server is not None
            token = host._admin_token
            async with httpx.AsyncClient(base_url=host.server.url) as client:
                body = {"names": ["ghost", "literalist"], "holes": 1}
                codes = [(await client.post("/matches", json=body)).status_code,
                         (await client.post("/matches", json=body,
                                            headers={"Authorization": "Bearer x"})).status_code,
                         (await client.post("/matches", json=body, headers={
                             "Authorization": f"Bearer {token}"})).status_code]
            return token, codes

    token, codes = asyncio.run(go())
    assert codes == [401, 401, 201]  # the runner's token works; nothing else does
    log = (tmp_path / "r" / "logs" / f"{job.match_id}.spy.log").read_text()
    assert "ENV" in log and "ARGV" in log and token not in log
