"""Nothing a bot starts outlives its night, and a bot's scratch folder has a size limit.

A real night (`cogolf league run`) with a command bot that double-forks, calls
`setsid`, leaves two sleepers (one holding its output, one not) and is slow to
connect, and a bot that fills its scratch folder before it connects: once the run
returns, after a normal end, a Ctrl-C, a SIGKILL of the bot's launcher or of the
runner itself, none of the sleepers is left and no bot cgroup of the night's uids
holds a task. The sleepers carry a number of the test's own in their argv, so only
what this test started is looked for (other nights lease the same uids).
"""

from __future__ import annotations

import fcntl
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

from cogolf.league.botwall import SCRATCH_BYTES, BotWall, bot_python, wrap
from cogolf.league.records import VOID_SUFFIX
from cogolf.sandbox.cgroups import BOT_PREFIX, UidGroups, available_bases
from cogolf.sandbox.sweep import uid_processes
from cogolf.sandbox.uids import lock_dir
from tests.processes import cmdline, ctrl_c, in_session, sleepers, token, wait_until

REPO = Path(__file__).resolve().parents[2]
SLOW_SECONDS = 2.0  # the lingering bot connects this late

LINGER = """\
import os, sys, time

mark = sys.argv[1]
print("LINGER uid", os.getuid(), flush=True)
if os.fork() == 0:
    os.setsid()
    if os.fork() == 0:
        os.execv("/bin/sleep", ["sleep", mark])  # holds the bot's output
    if os.fork() == 0:
        os.closerange(0, 3)
        os.execv("/bin/sleep", ["sleep", mark])
    os._exit(0)
time.sleep(float(sys.argv[2]))  # slow to connect
os.execv(sys.executable, [sys.executable, "-m", "cogolf", "bot", "--policy", "literalist"])
"""

FILL = """\
import os, sys

scratch = os.environ["TMPDIR"]
chunk = 64 << 20  # RLIMIT_FSIZE: one file holds at most this much
for i in range(int(sys.argv[1]) // chunk):
    with open(os.path.join(scratch, f"part{i}"), "wb") as f:
        f.write(b"x" * chunk)
print("FILL wrote", int(sys.argv[1]), flush=True)
try:
    with open(os.path.join(scratch, "one-more"), "wb") as f:
        f.write(b"y")
    print("FILL one more byte: written", flush=True)
except OSError as exc:
    print("FILL one more byte:", exc, flush=True)
sys.exit(5)
"""


def night_file(base: Path, mark: str, *, filler: bool) -> Path:
    python = bot_python()
    text = f"""\
name = "lingering"
seed = 5
holes = 1
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "lingerer"
command = ["{python}", "linger.py", "{mark}", "{SLOW_SECONDS}"]
"""
    if filler:
        text += f"""
[[entrant]]
name = "filler"
command = ["{python}", "fill.py", "{SCRATCH_BYTES}"]
"""
    path = base / "lingering.toml"
    path.write_text(text)
    return path


def league_run(base: Path, night: Path) -> list[str]:
    return [sys.executable, "-m", "cogolf", "league", "run", str(night), "--replays",
            str(base / "replays"), "--league-dir", str(base / "league")]


@pytest.fixture
def needs_root() -> None:
    if os.geteuid() != 0:
        pytest.skip("bots run walled, and leave nothing behind, only under root")


@pytest.fixture
def base() -> Iterator[Path]:
    """A folder every user can read (bots run as unprivileged uids)."""
    path = Path(tempfile.mkdtemp(prefix="cogolf-lingering-"))
    os.chmod(path, 0o755)
    (path / "linger.py").write_text(LINGER)
    (path / "fill.py").write_text(FILL)
    yield path
    shutil.rmtree(path, ignore_errors=True)


def night_uids(base: Path) -> set[int]:
    """The uids the lingering bot ran as, from its logs."""
    logs = "".join(p.read_text() for p in (base / "replays").rglob("*.log"))
    return {int(u) for u in re.findall(r"LINGER uid (\d+)", logs)}


def assert_nothing_left(base: Path, mark: str) -> None:
    assert sleepers(mark) == []
    uids = night_uids(base)
    assert uids
    bases = available_bases()
    for uid in uids:
        # a uid some other night leases now runs that night's programs, not ours
        fd = os.open(os.path.join(lock_dir(), str(uid)), os.O_RDONLY)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                continue
            assert UidGroups.existing(uid, bases, BOT_PREFIX).pids() == [], uid
            assert uid not in uid_processes({uid}), uid
        finally:
            os.close(fd)


@pytest.mark.slow
def test_a_night_ends_every_daemon_and_a_bot_over_its_scratch_fails_saying_so(
    base: Path, needs_root: None
) -> None:
    mark = token()
    run = subprocess.run(league_run(base, night_file(base, mark, filler=True)), cwd=base,
                         capture_output=True, text=True, timeout=600, check=False)
    assert run.returncode in (0, 1), run.stderr[-3000:]
    assert_nothing_left(base, mark)
    night = base / "replays" / "lingering"
    # slow to connect is no fault: its matches against the literalist were played
    for match in ("lingering-literalist-vs-lingerer", "lingering-lingerer-vs-literalist"):
        assert (night / f"{match}.ndjson").exists(), match
    causes = {p.name: json.loads(p.read_text())["cause"] for p in night.glob(f"*{VOID_SUFFIX}")}
    filler = {name: cause for name, cause in causes.items() if "filler" in name}
    assert len(filler) == 4, causes
    for cause in filler.values():
        assert "FILL wrote 268435456" in cause, cause
        assert "FILL one more byte: [Errno 28] No space left on device" in cause, cause
        assert "the scratch folder is full: it holds at most 256 MiB" in cause, cause


def _wait_for_sleepers(mark: str, night: subprocess.Popen[str]) -> None:
    assert wait_until(lambda: len(sleepers(mark)) >= 2 or night.poll() is not None, 120)
    assert night.poll() is None, "the night ended before its bot left its sleepers"


def _launchers_of(mark: str) -> list[int]:
    """The launchers (`cogolf.league.botwall`) whose bot is the lingerer with `mark`."""
    found = [int(name) for name in os.listdir("/proc") if name.isdigit()
             and b"cogolf.league.botwall" in (args := cmdline(int(name)))
             and mark.encode() in args]
    assert found
    return found


@pytest.mark.slow
@pytest.mark.parametrize("how", ["ctrl-c", "kill-launcher", "kill-runner"])
def test_an_interrupted_night_leaves_no_daemon(base: Path, how: str, needs_root: None) -> None:
    """Ctrl-C of `league run` (SIGINT to its process group, as a terminal sends it);
    SIGKILL of the lingering bot's launcher (the night sweeps the uid it dropped);
    SIGKILL of the runner (each launcher ends its bot when its parent dies)."""
    mark = token()
    with in_session(league_run(base, night_file(base, mark, filler=False)), base) as night:
        _wait_for_sleepers(mark, night)
        if how == "ctrl-c":
            errors = ctrl_c(night, 300)
        else:
            for pid in _launchers_of(mark) if how == "kill-launcher" else [night.pid]:
                os.kill(pid, signal.SIGKILL)
            errors = night.communicate(timeout=300)[1]
    if how == "ctrl-c":
        # the night's server shuts down on it; the night then ends, its matches void
        assert night.returncode in (0, 1, 130), errors[-3000:]
    elif how == "kill-launcher":
        assert night.returncode in (0, 1), errors[-3000:]
    else:
        # no one waits for the launchers now: each ends its bot, then exits
        assert wait_until(lambda: not sleepers(mark), 10)
    assert_nothing_left(base, mark)


def test_a_bots_scratch_takes_its_limit_to_the_byte_and_not_one_more(
    bot_dir: Path, needs_root: None
) -> None:
    """256 MiB in files of at most 64 MiB (RLIMIT_FSIZE) fit; the next byte does not."""
    (bot_dir / "fill.py").write_text(FILL)
    server = socket.socket()
    server.bind(("127.0.0.1", 0))
    server.listen(1)
    log = bot_dir / "fill.log"
    argv = wrap([bot_python(), "fill.py", str(SCRATCH_BYTES)], BotWall(cwd=str(bot_dir),
                                                                        log=str(log)))
    url = f"ws://127.0.0.1:{server.getsockname()[1]}/x"
    run = subprocess.run(argv, env={**os.environ, "COGOLF_URL": url}, timeout=120, check=False)
    server.close()
    assert run.returncode == 5
    lines: list[Any] = log.read_text().splitlines()
    assert lines[:2] == ["FILL wrote 268435456",
                         "FILL one more byte: [Errno 28] No space left on device"]
    assert lines[2].startswith("[cogolf] the scratch folder is full: it holds at most 256 MiB")
