"""An LLM entrant's key and transcripts on a real night, against a spying opponent.

The spy is a walled command entrant that, while the LLM seat is running beside it,
reads every `/proc/<pid>/environ` and `cmdline` it can and every transcript path it
can guess; then the night's folder, its published site and the pages `cogolf serve`
shows of it are searched for the key and for transcript content.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import httpx

from cogolf.league.botwall import bot_python
from tests.llm.helpers import KEY, KEY_ENV, all_text, write_config
from tests.llm.test_end_to_end import ROOT

# The key is assembled at run time, so the spy's own file and argv never hold it.
SPY = """\
import json, os, sys, time
key = "".join(sys.argv[1:3]).encode()
night = sys.argv[3]
seen = {"environ-readable": 0, "llm-seat-seen": 0, "key-found": 0, "proc-listed": 1}
seen["key-in-own-env"] = sum(key in v.encode() for v in os.environ.values())
deadline = time.monotonic() + 4
while time.monotonic() < deadline:
    try:
        pids = [int(p) for p in os.listdir("/proc") if p.isdigit()]
    except OSError:  # walled off: guess the pids around ours instead
        seen["proc-listed"] = 0
        pids = range(max(1, os.getpid() - 3000), os.getpid() + 3000)
    for pid in pids:
        if pid == os.getpid():
            continue
        try:
            cmd = open(f"/proc/{pid}/cmdline", "rb").read()
        except OSError:
            continue
        if b"llm:" in cmd:
            seen["llm-seat-seen"] += 1
        if key in cmd:
            seen["key-found"] += 1
        try:
            env = open(f"/proc/{pid}/environ", "rb").read()
        except OSError:
            continue
        seen["environ-readable"] += b"llm:" in cmd
        seen["key-found"] += key in env
    time.sleep(0.2)
try:
    os.listdir(os.path.join(night, "llm"))
    seen["transcripts-listed"] = 1
except OSError:
    seen["transcripts-listed"] = 0
print("PROBE", json.dumps(seen), flush=True)
os.execv(sys.executable, [sys.executable, "-m", "cogolf", "bot", "--policy", "literalist"])
"""


def test_no_key_nor_transcript_reaches_the_opponent_the_files_or_the_pages(fake):
    base = Path(tempfile.mkdtemp(prefix="cogolf-llm-secrets-"))
    os.chmod(base, 0o755)  # readable by the bots' uids: only the night's walls keep them out
    try:
        _night(fake, base)
    finally:
        shutil.rmtree(base, ignore_errors=True)


def _night(fake, base: Path) -> None:
    (base / "spy.py").write_text(SPY)
    config = write_config(base / "gpt.toml", fake, "openai", "gpt-spied")
    night_dir = base / "replays" / "secrets"
    half = len(KEY) // 2
    (base / "night.toml").write_text(f"""\
name = "secrets"
seed = 4
holes = 2
parallel = 1

[[entrant]]
name = "gpt"
llm = "{config.name}"

[[entrant]]
name = "spy"
command = ["{bot_python()}", "spy.py", "{KEY[:half]}", "{KEY[half:]}", "{night_dir}"]
""")
    # The night file holds the key in two halves: the spy's argv is what the test plants,
    # so it is excluded from the scan below; what matters is what the night adds.
    run = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "league",
            "run",
            "night.toml",
            "--replays",
            str(base / "replays"),
            "--league-dir",
            str(base / "league"),
        ],
        capture_output=True,
        text=True,
        cwd=base,
        timeout=600,
        env={**os.environ},
    )
    assert run.returncode == 0, run.stdout + run.stderr
    assert os.environ[KEY_ENV] == KEY and any(c.key == KEY for c in fake.calls_for("gpt-spied"))

    probes = [
        json.loads(line.removeprefix("PROBE "))
        for log in sorted((night_dir / "logs").glob("*.spy.log"))
        for line in log.read_text().splitlines()
        if line.startswith("PROBE ")
    ]
    assert len(probes) == 2
    for probe in probes:
        # Either /proc is walled off altogether, or the LLM seat running beside the spy
        # shows in its `ps` with its environment closed to it.
        assert probe["llm-seat-seen"] > 0 or probe["proc-listed"] == 0
        assert probe["environ-readable"] == 0
        assert probe["key-found"] == 0 and probe["transcripts-listed"] == 0
        assert probe["key-in-own-env"] == 0  # the night's environment holds it; the wall not

    transcripts = sorted((night_dir / "llm").glob("*.ndjson"))
    assert len(transcripts) == 2
    assert all(os.stat(p).st_mode & 0o777 == 0o600 for p in transcripts)
    # The seat is walled: its transcript is the gateway's, every request the seat sent.
    request = json.loads(transcripts[0].read_text().splitlines()[0])
    assert request["kind"] == "request"
    marker = request["body"]["messages"][0]["content"][:80]  # the system prompt

    site = base / "site"
    publish = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "league",
            "publish",
            str(night_dir),
            "--out",
            str(site),
            "--league-dir",
            str(base / "league"),
        ],
        capture_output=True,
        text=True,
        cwd=base,
        timeout=300,
    )
    assert publish.returncode == 0, publish.stderr
    assert not any("llm" in p.relative_to(site).parts for p, _ in all_text(site))

    pages = _served_pages(base, [p.name.removesuffix(".ndjson") for p in transcripts])
    (base / "out.txt").write_text(run.stdout + run.stderr + publish.stdout + publish.stderr)
    leaks = [
        str(p)
        for p, data in all_text(base)
        if p.name not in ("night.toml", "spy.py") and KEY.encode() in data
    ]
    assert not leaks
    for path, data in all_text(site):
        assert marker.encode() not in data, path
    for text in pages:
        assert KEY not in text and marker not in text


def _served_pages(base: Path, transcript_ids: list[str]) -> list[str]:
    """The night's pages as `cogolf serve` shows them, and guesses at the transcripts."""
    argv = [
        sys.executable,
        "-m",
        "cogolf",
        "serve",
        "--port",
        "0",
        "--data",
        str(base / "data"),
        "--league-dir",
        str(base / "league"),
        "--league-replays",
        str(base / "replays"),
    ]
    server = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, cwd=ROOT)
    try:
        assert server.stdout is not None
        url = server.stdout.readline().decode().split("listening on ")[1].split()[0]
        texts = []
        for tid in transcript_ids:
            for path in (
                f"/nights/secrets/matches/{tid}",
                f"/nights/secrets/llm/{tid}.ndjson",
                f"/nights/secrets/matches/llm%2F{tid}",
                f"/matches/{tid}/replay.ndjson",
                f"/static/..%2F..%2Freplays%2Fsecrets%2Fllm%2F{tid}.ndjson",
            ):
                r = httpx.get(url + path, timeout=30)
                assert r.status_code in (400, 404), (path, r.status_code)
                texts.append(r.text)
        night = httpx.get(url + "/nights/secrets", timeout=30)
        assert night.status_code == 200 and "gpt" in night.text
        texts.append(night.text)
        return texts
    finally:
        server.terminate()
        server.wait(timeout=30)
