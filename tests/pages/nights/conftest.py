"""Fixtures of the night pages' tests: a real night, a hostile synthetic one, a real
`cogolf serve` showing both, and Chromium (fails in CI when missing, never skips)."""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import pytest

from cogolf.league.publish import standings_for_dir, write_standings
from cogolf.pages.nights_synth import write_night
from tests.pages.conftest import CHROMIUM
from tests.serving import start_serve
from tests.stacks import needs

ROOT = Path(__file__).resolve().parents[3]
needs_chromium = needs(CHROMIUM.exists(), "Debian's chromium")
ARTIFACTS = Path(os.environ.get("COGOLF_ARTIFACTS", ROOT / "build" / "pages-screenshots"))

HOSTILE = [
    "literalist",
    "<img src=x onerror=window.__pwned=1>",
    "</script><script>window.__pwned=2</script>",
    '"><svg onload=window.__pwned=3>',
    "L" + "o" * 300 + "ng",
    "plain",
]

SHORT = ["literalist", "rookie", "newbie"]

REAL_NIGHT = """\
name = "real"
seed = 5
holes = 1
parallel = 2

[[entrant]]
name = "literalist"
policy = "literalist"

[[entrant]]
name = "pedant"
policy = "pedant"

[[entrant]]
name = "parrot"
policy = "cogolf.league.sample_bots:parrot"
"""


def cogolf(*args: str, cwd: Path, timeout: float = 600) -> subprocess.CompletedProcess[str]:
    return subprocess.run(
        [sys.executable, "-m", "cogolf", *args], capture_output=True, text=True, cwd=cwd,
        timeout=timeout,
    )  # fmt: skip


@dataclass(frozen=True)
class Nights:
    root: Path  # holds league/ and replays/

    @property
    def league(self) -> Path:
        return self.root / "league"

    @property
    def replays(self) -> Path:
        return self.root / "replays"


@pytest.fixture(scope="session")
def nights() -> Iterator[Nights]:
    """A real 3-entrant night played by `league run`, a hostile synthetic one and a short
    synthetic one."""
    root = Path(tempfile.mkdtemp(prefix="cogolf-nights-"))
    os.chmod(root, 0o755)
    (root / "real.toml").write_text(REAL_NIGHT)
    run = cogolf("league", "run", "real.toml", cwd=root)
    assert run.returncode == 0, run.stderr
    folder = write_night(root / "replays", "hostile", HOSTILE, holes=3)
    doc = standings_for_dir(folder, "literalist")
    write_standings(doc, root / "league" / "hostile" / "standings.json")
    # A short night: rookie and newbie never met (both their matches unplayed), so each
    # has only its two against literalist, too few to say; literalist played four.
    folder = write_night(root / "replays", "short", SHORT, holes=1, solo=False)
    for mid in ("short-m001-002", "short-m002-001"):
        (folder / f"{mid}.ndjson").unlink()
    write_standings(standings_for_dir(folder), root / "league" / "short" / "standings.json")
    yield Nights(root)
    shutil.rmtree(root, ignore_errors=True)


@dataclass
class Server:
    url: str
    proc: subprocess.Popen[str]


@pytest.fixture(scope="session")
def server(nights: Nights) -> Iterator[Server]:
    """A real `cogolf serve` on a free loopback port, showing the nights' folders."""
    proc, url = start_serve(
        "--data", str(nights.root / "data"), "--league-dir", str(nights.league),
        "--league-replays", str(nights.replays), cwd=nights.root,
    )  # fmt: skip
    yield Server(url, proc)
    proc.terminate()
    proc.wait(timeout=30)


def shot(page: object, name: str) -> Path:
    """Keep a screenshot of the page as a test artifact."""
    ARTIFACTS.mkdir(parents=True, exist_ok=True)
    path = ARTIFACTS / f"{name}.png"
    page.screenshot(path=str(path), full_page=True)  # type: ignore[attr-defined]
    return path
