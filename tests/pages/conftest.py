"""A real `cogolf serve` on a loopback port for the page tests, and the matches they look at.

One server and a few short matches per session keep the tests fast: each match
is played by `SteppedSeats` over real websockets, with hostile names, tests,
notes and sources where the tests need them.
"""

from __future__ import annotations

import json
import os
import signal
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import httpx
import pytest

from tests.pages.seats import DECK, SteppedSeats
from tests.serving import start_serve

ROOT = Path(__file__).resolve().parents[2]
PAYLOAD = "window.__pwned = 1"
HOSTILE_NAMES = [f'<img src=x onerror="{PAYLOAD}">', f"</script><script>{PAYLOAD}</script>"]


def deep(levels: int) -> Any:
    value: Any = 1
    for _ in range(levels - 1):
        value = [value]
    return value


@dataclass
class Served:
    url: str
    data: Path
    proc: subprocess.Popen[bytes]

    def post(self, **body: Any) -> dict[str, Any]:
        reply = httpx.post(f"{self.url}/matches", json=body, timeout=30)
        assert reply.status_code == 201, reply.text
        return reply.json()

    def seats(self, made: dict[str, Any], **kw: Any) -> SteppedSeats:
        return SteppedSeats([s["url"] for s in made["seats"]], **kw)

    def journal(self, match_id: str) -> Path:
        return self.data / "replays" / f"{match_id}.ndjson"


@pytest.fixture(scope="session")
def served(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Served]:
    data = tmp_path_factory.mktemp("pages") / "data"
    log = open(data.parent / "serve.log", "ab")  # noqa: SIM115
    proc, url = start_serve("--data", str(data), stderr=log)
    try:
        yield Served(url, data, proc)
    finally:
        proc.send_signal(signal.SIGTERM)
        try:
            proc.wait(30)
        except subprocess.TimeoutExpired:
            proc.kill()
        log.close()


def hostile_play(key: str) -> dict[str, Any]:
    """The literalist's play with a 4,000-character source and hostile test text."""
    from cogolf.bots.scripted import baseline_play

    play = baseline_play(DECK.public, key, "literalist")
    impl = play["impl"] + f"\n# </script><script>{PAYLOAD}</script> " + "x" * 4000
    tests = list(play["tests"])
    tests[0] = {**tests[0], "name": f'<img src=x onerror="{PAYLOAD}">'}
    tests[1] = {**tests[1], "why": f'</script><svg onload="{PAYLOAD}"> {"w" * 300}'}
    tests[2] = {**tests[2], "args": [deep(60)], "expect": deep(60)}
    return {**play, "impl": impl[:4000], "tests": tests, "note": f"<script>{PAYLOAD}</script>"}


@pytest.fixture(scope="session")
def finished(served: Served) -> dict[str, Any]:
    """A finished 3-hole match: hostile names; on hole 1 seat 0 sends junk and gets the
    fallback; on hole 2 seat 0 plays hostile text; hole 3 is plain."""
    made = served.post(
        seed=11, holes=3, names=HOSTILE_NAMES, hole_deadline_seconds=30, retry_deadline_seconds=0.3
    )
    seats = served.seats(made)
    try:
        seats.step(['{"type": "submission", "hole": 1, "impl": 5}', None])
        key = seats.pending[0]["observation"]["spec"]["key"]  # type: ignore[index]
        seats.step([hostile_play(key), None])
        done = seats.play_out()
    finally:
        seats.close()
    return {"match_id": made["match_id"], "done": done, "path": served.journal(made["match_id"])}


@pytest.fixture(scope="session")
def artifacts() -> Path:
    """Screenshots of every page, kept for a person to look at (build/ is git-ignored)."""
    folder = Path(os.environ.get("COGOLF_ARTIFACTS", ROOT / "build" / "pages-screenshots"))
    folder.mkdir(parents=True, exist_ok=True)
    return folder


def journal_records(path: Path) -> list[dict[str, Any]]:
    return [json.loads(line) for line in path.read_text().splitlines()]


@pytest.fixture(scope="session")
def golf(served: Served) -> dict[str, Any]:
    """A finished live golf match on the python course: hole 1 a wrong answer, hole 2
    passed (no submission), every other hole the reference file."""
    from websockets.sync.client import connect

    from tests.games.golf.policies import SOLUTIONS

    made = served.post(game="golf", course="python", names=["<b>golfer</b>"])
    with connect(made["seats"][0]["url"], open_timeout=30) as ws:
        while True:
            msg = json.loads(ws.recv(timeout=120))
            if msg["type"] == "done":
                break
            if msg["type"] != "observation":
                continue
            task = msg["observation"]["task"]
            source: str | None = (SOLUTIONS / "python" / task["file_name"]).read_text()
            if msg["hole"] == 1:
                source = "def solve(*a):\n    return 'wrong </script>'\n"
            elif msg["hole"] == 2:
                source = None
            ws.send(json.dumps({"type": "submission", "hole": msg["hole"], "source": source}))
    return {"match_id": made["match_id"], "path": served.journal(made["match_id"])}


CHROMIUM = Path("/usr/bin/chromium")


@pytest.fixture(scope="module")
def browser() -> Iterator[Any]:
    """Debian's Chromium driven by Playwright, for one test module at a time: Playwright's
    sync API holds an event loop in this thread while it runs, so it must be gone before
    another module's test calls `asyncio.run`. In CI a missing Playwright fails."""
    if os.environ.get("CI"):
        from playwright.sync_api import sync_playwright
    else:
        sync_playwright = pytest.importorskip("playwright.sync_api").sync_playwright
    with sync_playwright() as pw:
        b = pw.chromium.launch(executable_path=str(CHROMIUM), headless=True)
        try:
            yield b
        finally:
            b.close()
