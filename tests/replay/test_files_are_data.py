"""Files are data: a replay never names code to run, a metadata file never names a path,
and one match has one journal with one writer."""

from __future__ import annotations

import asyncio
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from cogolf.bots.policy import load_policy
from cogolf.engine.match import MatchConfig
from cogolf.replay import JournalBusy, ReplayError, ReplayWriter, read_replay
from cogolf.runtime.seats import Inbound, InProcessSeat
from cogolf.server.requests import CreateMatch, RequestError
from tests.replay.helpers import DECK, edit, lines_of, play_in_process, write_lines
from tests.server.helpers import running_server

ROOT = Path(__file__).resolve().parents[2]


def cli(
    *args: str, cwd: Path | None = None, env: dict | None = None
) -> subprocess.CompletedProcess:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "PYTHONPATH": str(ROOT), **(env or {})},
    )


def with_names(lines: list[str], names: list[str]) -> list[str]:
    def change(doc: dict) -> None:
        doc["names"] = list(names)
        doc["config"]["names"] = list(names)

    return edit(lines, 0, change)


def test_play_from_never_runs_code_named_in_a_replay(honest, tmp_path):
    marker = tmp_path / "pwned"
    payload = f"open({str(marker)!r}, 'w').write('ran')\ndef play(observation):\n    return {{}}\n"
    (tmp_path / "evil.py").write_text(payload)
    (tmp_path / "evilmod.py").write_text(payload)
    refs = [f"{tmp_path / 'evil.py'}:play", "evilmod:play"]
    bad = write_lines(tmp_path / "bad.ndjson", with_names(lines_of(honest), refs))
    env = {"PYTHONPATH": f"{ROOT}{os.pathsep}{tmp_path}"}
    for mode in (["--in-process"], []):
        done = cli("play", "--from", str(bad), "--replays", str(tmp_path / "r"), *mode, env=env)
        assert done.returncode == 2, done.stderr
        assert "not a built-in bot" in done.stderr and "--seat0" in done.stderr
        assert "Traceback" not in done.stderr
    # Given on the command line, the seats are the operator's choice; the names stay unread.
    done = cli(
        "play",
        "--from",
        str(bad),
        "--seat0",
        "literalist",
        "--seat1",
        "pedant",
        "--in-process",
        "--replays",
        str(tmp_path / "r"),
        env=env,
    )
    assert done.returncode == 0, done.stderr
    assert not marker.exists()
    played = read_replay(next((tmp_path / "r").glob("*.ndjson")))
    assert played.header.names == ["literalist", "pedant"]
    assert played.header.seed == read_replay(honest).header.seed


def test_play_from_refuses_a_config_no_server_would_create(honest, tmp_path):
    for key, value in (("holes", 100), ("hole_deadline_seconds", 0.0), ("seed", -1)):
        lines = edit(lines_of(honest), 0, lambda d, k=key, v=value: d["config"].__setitem__(k, v))
        bad = write_lines(tmp_path / "bad.ndjson", lines)
        done = cli("play", "--from", str(bad), "--in-process", "--replays", str(tmp_path / "r"))
        assert done.returncode == 2 and "Traceback" not in done.stderr, done.stderr
        assert str(bad) in done.stderr and done.stderr.count("\n") == 1, done.stderr
    assert not (tmp_path / "r").exists() or not list((tmp_path / "r").iterdir())


def files_under(root: Path) -> set[Path]:
    return {p for p in root.rglob("*")}


def test_a_metadata_file_cannot_make_resume_write_outside_the_data_dir(honest, tmp_path):
    data = tmp_path / "deep" / "data"
    (data / "matches").mkdir(parents=True)
    meta = {
        "match_id": "../../../escaped",
        "config": json.loads(lines_of(honest)[0])["config"],
        "token_hashes": ["0" * 64, "1" * 64],
        "deck": DECK.name,
        "created_at": 0.0,
    }
    (data / "matches" / "evil.json").write_text(json.dumps(meta))
    meta["match_id"] = "someone-else"  # a valid id that is not the file's own name
    (data / "matches" / "mine.json").write_text(json.dumps(meta))
    golf = {**meta, "game": "golf", "match_id": "../../golf-escaped"}
    (data / "matches" / "golfish.json").write_text(json.dumps(golf))
    before = files_under(tmp_path)

    async def scenario() -> list[str]:
        async with running_server(data, connect_timeout=0.5) as server:
            await asyncio.sleep(1.0)
            return list(server.registry.matches)

    hosted = asyncio.run(scenario())
    assert hosted == []
    outside = {p for p in files_under(tmp_path) - before if data not in p.parents}
    assert outside == set()
    assert not list(tmp_path.rglob("*escaped*"))


def test_a_request_cannot_name_a_path_or_take_a_used_id(tmp_path):
    async def scenario() -> None:
        async with running_server(tmp_path / "data", connect_timeout=0.5) as server:
            for bad in ("../x", "a/b", "", ".hidden", "x" * 81, "a b", "é"):
                with pytest.raises(RequestError, match="not a match id"):
                    server.registry.create(CreateMatch(match_id=bad))
            server.registry.create(CreateMatch(match_id="taken", holes=1))
            with pytest.raises(RequestError, match="exists"):
                server.registry.create(CreateMatch(match_id="taken", holes=1))
            # A journal left on disk by another server also holds its id.
            (tmp_path / "data" / "replays").mkdir(parents=True, exist_ok=True)
            (tmp_path / "data" / "replays" / "stale.ndjson").write_text("x\n")
            with pytest.raises(RequestError, match="exists"):
                server.registry.create(CreateMatch(match_id="stale", holes=1))

    asyncio.run(scenario())
    assert not list(tmp_path.glob("x*")) and not (tmp_path / "a").exists()


def test_a_replay_header_whose_id_is_a_path_is_refused(honest, tmp_path):
    lines = edit(lines_of(honest), 0, lambda d: d.__setitem__("match_id", "../../x"))
    with pytest.raises(ReplayError, match=r":1: match_id '\.\./\.\./x' is not a match id"):
        read_replay(write_lines(tmp_path / "bad.ndjson", lines))


def test_a_journal_has_one_writer(tmp_path):
    path = tmp_path / "j.ndjson"
    with ReplayWriter(path) as first:
        first.write(read_replay_header())
        with pytest.raises(JournalBusy, match="exists"):
            ReplayWriter(path)
        with pytest.raises(JournalBusy, match="another writer"):
            ReplayWriter(path, append=True)
    with ReplayWriter(path, append=True):  # the first writer is gone: resuming may append
        pass
    other = subprocess.run(
        [sys.executable, "-c", LOCK_HOLDER, str(path)], capture_output=True, text=True, timeout=60
    )
    assert other.returncode == 0, other.stderr


LOCK_HOLDER = """
import sys
from cogolf.replay import ReplayWriter, JournalBusy
with ReplayWriter(sys.argv[1], append=True):
    pass
"""


def read_replay_header():
    from cogolf import messages as m

    return m.HoleStart(hole=1, spec_key="x", at=0.0)


def test_two_plays_with_one_seed_in_one_second_keep_their_own_journals(tmp_path):
    out = tmp_path / "r"
    runs = [
        ("literalist", "pedant", ["--in-process"]),
        ("pedant", "literalist", ["--in-process"]),
        ("pedant", "pedant", []),
        ("literalist", "literalist", []),
    ]
    procs = [
        subprocess.Popen(
            [
                sys.executable,
                "-m",
                "cogolf",
                "play",
                "--seed",
                "5",
                "--holes",
                "2",
                "--seat0",
                a,
                "--seat1",
                b,
                "--replays",
                str(out),
                *mode,
            ],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for a, b, mode in runs
    ]
    outputs = [p.communicate(timeout=300) for p in procs]
    assert [p.returncode for p in procs] == [0, 0, 0, 0], [e for _, e in outputs]
    journals = sorted(out.glob("*.ndjson"))
    assert len(journals) == 4
    by_path = {str(j): read_replay(j) for j in journals}
    for (a, b, _), (stdout, _) in zip(runs, outputs, strict=True):
        path = stdout.strip().splitlines()[-1].split("replay: ")[1]
        replay = by_path.pop(path)
        assert replay.header.names == [a, b] and replay.result is not None
        assert replay.result.names == [a, b]
        assert f"seat 0: {a} (Ash)    seat 1: {b} (Basil)" in stdout
    verified = cli("replay", "--verify", str(journals[0]))
    assert verified.returncode == 0, verified.stderr


def test_a_second_play_cannot_take_an_existing_journal(tmp_path):
    out = tmp_path / "r"
    first = cli("play", "--holes", "1", "--match-id", "mine", "--in-process", "--replays", str(out))
    assert first.returncode == 0, first.stderr
    before = (out / "mine.ndjson").read_bytes()
    for mode in (["--in-process"], []):
        again = cli("play", "--holes", "1", "--match-id", "mine", "--replays", str(out), *mode)
        assert again.returncode == 2 and "exists" in again.stderr, again.stderr
    assert (out / "mine.ndjson").read_bytes() == before
    bad = cli("play", "--match-id", "../up", "--in-process", "--replays", str(out))
    assert bad.returncode == 2 and "not a match id" in bad.stderr
    assert not (tmp_path / "up.ndjson").exists()


class RawSeat(InProcessSeat):
    """Sends its policy's play as JSON text, with every expect of 12345 spelled 1e999."""

    def _think(self, observation, hole):  # type: ignore[no-untyped-def]
        play = self.policy(observation)
        play = {"type": "submission", "hole": hole, **play}
        if self.first:
            self.first = False
            play["tests"][0]["expect"] = 12345
        text = json.dumps(play).replace("12345", "1e999")
        self._deliver(Inbound(self.slot, raw=text))

    first = True


def test_a_test_expecting_1e999_is_refused_at_intake_and_the_replay_verifies(tmp_path, shared):
    config = MatchConfig(seed=3, holes=1, names=("literalist", "pedant"))
    seats = [RawSeat(0, load_policy("literalist")), InProcessSeat(1, load_policy("pedant"))]
    path = play_in_process(tmp_path / "inf-1.ndjson", holes=config.holes, seats=seats)
    sub = read_replay(path).events[1]
    assert sub.slot == 0 and sub.attempts == 2 and "out of range" in sub.errors[0]
    assert shared.verify(path).holes_resolved == 1
