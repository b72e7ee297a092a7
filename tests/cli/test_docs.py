"""The README's examples do what it says, run as a user would (issue 18)."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
import tempfile
import time
import urllib.request
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from tests.cli.run import cogolf

ROOT = Path(__file__).resolve().parents[2]
README = (ROOT / "README.md").read_text()
RAW_BOT = next(b for b in re.findall(r"```python\n(.*?)```", README, re.S) if "websockets" in b)
NIGHT_COMMAND = re.search(r'^command = "([^"]+)"', README, re.M)
CONSOLE = Path(sys.executable).parent / "cogolf"  # the installed script, as a user runs it
SHADOW = "raise ImportError('this folder is not the installed cogolf package')\n"


@contextmanager
def world_readable_folder() -> Iterator[Path]:
    """Bots run unprivileged: their folder must be one every user can read."""
    folder = Path(tempfile.mkdtemp(prefix="cogolf-docs-"))
    try:
        folder.chmod(0o755)
        yield folder
    finally:
        shutil.rmtree(folder)


def test_the_raw_bot_and_the_night_command_share_one_url_convention() -> None:
    """The README's raw-websockets bot, started exactly as its night-file example
    says, plays a whole night; the night runs from a folder holding a `cogolf`
    package of its own, which neither the policy bots nor the night import."""
    assert NIGHT_COMMAND is not None
    command = NIGHT_COMMAND.group(1)
    assert command == "{python} mybot.py --url {url}"
    with world_readable_folder() as folder:
        (folder / "mybot.py").write_text(RAW_BOT)
        (folder / "cogolf").mkdir()
        (folder / "cogolf" / "__init__.py").write_text(SHADOW)
        (folder / "n.toml").write_text(
            'name = "docs"\nseed = 2\nholes = 1\n'
            '[[entrant]]\nname = "lit"\npolicy = "literalist"\n'
            f'[[entrant]]\nname = "raw"\ncommand = "{command}"\n'
        )
        for path in folder.rglob("*"):
            path.chmod(0o755 if path.is_dir() else 0o644)
        done = subprocess.run(
            [str(CONSOLE), "league", "run", "n.toml", "--no-verify", "--json"],
            capture_output=True,
            text=True,
            cwd=folder,
            timeout=300,
        )
        assert done.returncode == 0, done.stderr
        standings = json.loads(done.stdout)
    game = standings["games"]["cogolf"]
    assert game["matches"]["played"] == 2 and game["matches"]["void"] == 0
    assert {r["name"]: r["fallbacks"] for r in game["table"]} == {"lit": 0, "raw": 0}


def test_play_from_a_folder_holding_a_cogolf_folder(tmp_path: Path) -> None:
    (tmp_path / "cogolf").mkdir()
    (tmp_path / "cogolf" / "__init__.py").write_text(SHADOW)
    done = subprocess.run(
        [str(CONSOLE), "play", "--holes", "1", "--replays", "out"],
        capture_output=True,
        text=True,
        cwd=tmp_path,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    assert "FALLBACK" not in done.stdout and list((tmp_path / "out").glob("*.ndjson"))


@contextmanager
def serve(data: Path, *options: str) -> Iterator[str]:
    proc = subprocess.Popen(
        [sys.executable, "-m", "cogolf", "serve", "--port", "0", "--data", str(data), *options],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    try:
        assert proc.stdout is not None
        line = proc.stdout.readline()
        assert "listening on" in line, line
        yield line.split("listening on ", 1)[1].strip()
    finally:
        proc.terminate()
        proc.wait(timeout=30)


def test_a_bot_too_late_is_told_why(tmp_path: Path) -> None:
    assert "counted from a match's creation" in " ".join(cogolf("serve", "--help").stdout.split())
    with serve(tmp_path / "data", "--connect-timeout", "0.2") as url:
        request = urllib.request.Request(
            f"{url}/matches", data=json.dumps({"holes": 1}).encode(), method="POST"
        )
        with urllib.request.urlopen(request, timeout=30) as response:
            created = json.loads(response.read())
        seat = created["seats"][0]["url"]
        for _ in range(300):  # nobody connects: the fallback plays both seats to the end
            with urllib.request.urlopen(f"{url}/matches/{created['match_id']}") as r:
                if json.loads(r.read())["status"] == "finished":
                    break
            time.sleep(0.1)
        done = cogolf("bot", "--url", seat)
    assert done.returncode == 2
    message = done.stderr.splitlines()[-1]
    assert message.startswith("cogolf bot: the server refused the seat (410): this match is over")
    assert "30 s by default, counted from the match's creation" in message


def test_an_llm_player_tried_with_the_fake_provider_and_no_key(tmp_path: Path) -> None:
    """The README's two commands to try an LLM player without a model or a key."""
    serve, play = (
        re.search(rf"^    ({start}.*?)\s+#", README, re.M)
        for start in (r"python -m cogolf\.llm\.fake ", r"cogolf play --seat0 llm:fake")
    )
    assert serve and play
    fake = subprocess.Popen(
        [sys.executable, *serve.group(1).split()[1:]],
        cwd=tmp_path,
        stdout=subprocess.PIPE,
        text=True,
        env={"PATH": "/usr/bin:/bin"},  # no key anywhere
    )
    try:
        assert fake.stdout is not None
        assert fake.stdout.readline().startswith("fake provider on http://127.0.0.1:")
        argv = [*play.group(1).split()[1:], "--holes", "1", "--replays", "out"]
        done = cogolf(*argv, cwd=tmp_path)
    finally:
        fake.terminate()
        fake.wait(10)
    assert done.returncode == 0, done.stderr
    seat0 = next(line for line in done.stdout.splitlines() if "breaches taken" in line)
    assert seat0.endswith("fallbacks 0")  # the model played its hole: no literalist fallback
    assert "seat 0: llm:fake (Ash)" in done.stdout
    assert "(1 hole, ended: complete)" in done.stdout  # not "1 holes"
    assert len(list((tmp_path / "out" / "llm").glob("*.seat0.ndjson"))) == 1
