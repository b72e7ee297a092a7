"""`cogolf bench pages`: how fast night pages render in Chromium, and what spectators
on those pages cost a server playing matches.

The night is synthetic (`nights_synth`: real replay and result files, random
scores), because playing a 32-entrant night for real takes far longer than the
measurement. Chromium is Debian's (`/usr/bin/chromium`) driven by Playwright;
first render is the first contentful paint, full render the first frame painted
after the load event (the pages are server-rendered: nothing is drawn later).
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import re
import signal
import statistics
import subprocess
import sys
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from urllib.parse import urlsplit

from cogolf.pages.nights import NightFolders
from cogolf.pages.nights_publish import publish
from cogolf.pages.nights_render import render_night
from cogolf.pages.nights_synth import write_night
from cogolf.pages.nights_view import build_night
from cogolf.pages.render import standalone_from_file

CHROMIUM = "/usr/bin/chromium"
Standings = Callable[[Path, Path], object]
NIGHT = "bench"
# Full render: the frame after the load event has been painted (two animation frames).
PAINTED = """
addEventListener("load", () => requestAnimationFrame(() => requestAnimationFrame(() => {
  window.__painted = performance.now();
})));
"""
TIMING = """() => {
  const paint = performance.getEntriesByName("first-contentful-paint")[0];
  return {first: paint ? paint.startTime : null, full: window.__painted};
}"""


def make_night(root: Path, entrants: int, standings: Standings) -> tuple[NightFolders, float]:
    names = ["literalist", *(f"bot{i:02d}" for i in range(entrants - 1))]
    start = time.perf_counter()
    folder = write_night(root / "replays", NIGHT, names, holes=9)
    standings(folder, root / "league" / NIGHT / "standings.json")
    return NightFolders(root / "league", root / "replays"), time.perf_counter() - start


def server_render_ms(folders: NightFolders, loads: int) -> float:
    times = []
    for _ in range(loads):
        start = time.perf_counter()
        render_night(build_night(folders, NIGHT, lambda mid: mid))
        times.append(time.perf_counter() - start)
    return statistics.median(times) * 1000


def browser_timings(urls: dict[str, str], loads: int) -> dict[str, dict[str, float]]:
    """Median first paint and full render (ms) of each URL, a fresh page per load."""
    from playwright.sync_api import sync_playwright

    out = {}
    with sync_playwright() as pw:
        browser = pw.chromium.launch(
            executable_path=CHROMIUM, args=["--no-sandbox", "--disable-gpu"], headless=True
        )
        try:
            for label, url in urls.items():
                page = browser.new_page(viewport={"width": 1280, "height": 900})
                page.goto(url)  # warm: the server's first render, the browser's caches
                page.close()
                firsts, fulls = [], []
                for _ in range(loads):
                    page = browser.new_page(viewport={"width": 1280, "height": 900})
                    page.add_init_script(PAINTED)
                    page.goto(url, wait_until="load")
                    page.wait_for_function("() => window.__painted !== undefined")
                    t = page.evaluate(TIMING)
                    page.close()
                    if t["first"] is not None:  # Chromium sometimes reports no paint entry
                        firsts.append(t["first"])
                    fulls.append(t["full"])
                out[label] = {
                    "first_render_ms": round(statistics.median(firsts), 1) if firsts else None,
                    "full_render_ms": round(statistics.median(fulls), 1),
                }
        finally:
            browser.close()
    return out


@contextlib.contextmanager
def serving(root: Path):  # type: ignore[no-untyped-def]
    """A real `cogolf serve` on a free loopback port, showing the nights under `root`."""
    proc = subprocess.Popen(
        [sys.executable, "-m", "cogolf", "serve", "--port", "0", "--data", str(root / "data"),
         "--league-dir", str(root / "league"), "--league-replays", str(root / "replays")],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
    )  # fmt: skip
    try:
        assert proc.stdout is not None
        url = None
        for line in proc.stdout:
            found = re.search(r"listening on (http://\S+)", line)
            if found:
                url = found.group(1)
                break
        if url is None:
            raise RuntimeError("cogolf serve did not start")
        yield url
    finally:
        proc.terminate()
        proc.wait(timeout=30)


# --- spectators on pages during `bench server` ----------------------------------------


@dataclass
class Spectators:
    """Clients that act like a browser on a running night's page: load it, poll its
    progress every `poll` seconds (as night.js does) and reload it every `reload`."""

    count: int
    night: str = NIGHT
    poll: float = 2.0
    reload: float = 10.0
    page_ms: list[float] = field(default_factory=list)
    polls: int = 0
    errors: int = 0

    async def _get(self, host: str, port: int, path: str) -> int:
        reader, writer = await asyncio.open_connection(host, port)
        try:
            writer.write(f"GET {path} HTTP/1.1\r\nHost: {host}\r\nConnection: close\r\n\r\n"
                         .encode())  # fmt: skip
            await writer.drain()
            data = await reader.read()
        finally:
            writer.close()
        return int(data.split(b" ", 2)[1]) if data.startswith(b"HTTP/1.1 ") else 0

    async def _one(self, base: str, offset: float) -> None:
        parts = urlsplit(base)
        host, port = parts.hostname or "127.0.0.1", parts.port or 80
        await asyncio.sleep(offset)
        next_reload = 0.0
        while True:
            now = time.perf_counter()
            try:
                if now >= next_reload:
                    status = await self._get(host, port, f"/nights/{self.night}")
                    self.page_ms.append((time.perf_counter() - now) * 1000)
                    next_reload = now + self.reload
                else:
                    status = await self._get(host, port, f"/nights/{self.night}/progress.json")
                    self.polls += 1
                self.errors += status != 200
            except OSError:
                self.errors += 1
            await asyncio.sleep(self.poll)

    async def crowd(self, base: str) -> None:
        await asyncio.gather(
            *(self._one(base, self.poll * i / self.count) for i in range(self.count))
        )

    def run(self) -> Callable[[str], Awaitable[Callable[[], Awaitable[None]]]]:
        """The crowd in a process of its own, as browsers would be: the server's process
        pays only for serving them. Starting returns once every spectator has its page;
        stopping adds the crowd's figures to this object."""

        async def start(base: str) -> Callable[[], Awaitable[None]]:
            proc = await asyncio.create_subprocess_exec(
                sys.executable, "-m", "cogolf.pages.nights_bench", base, str(self.count),
                self.night, stdout=asyncio.subprocess.PIPE,
            )  # fmt: skip
            assert proc.stdout is not None
            await proc.stdout.readline()  # "ready"

            async def stop() -> None:
                with contextlib.suppress(ProcessLookupError):
                    proc.send_signal(signal.SIGTERM)
                assert proc.stdout is not None
                out = await proc.stdout.read()
                await proc.wait()
                with contextlib.suppress(ValueError, KeyError):
                    doc = json.loads(out)
                    self.page_ms += doc["page_ms"]
                    self.polls += doc["polls"]
                    self.errors += doc["errors"]

            return stop

        return start


def median_doc(docs: list[dict[str, Any]]) -> dict[str, Any]:
    """One `bench server` document from several runs: the median of each number, and
    every incomplete match of any run."""
    out = dict(docs[0])
    for key, value in docs[0].items():
        if isinstance(value, int | float) and not isinstance(value, bool):
            out[key] = statistics.median(d[key] for d in docs)
    out["incomplete"] = [m for d in docs for m in d["incomplete"]]
    out["runs"] = len(docs)
    return out


def spectator_figures(s: Spectators) -> dict[str, Any]:
    return {
        "spectators": s.count,
        "page_loads": len(s.page_ms),
        "page_ms_p50": round(statistics.median(s.page_ms), 1) if s.page_ms else None,
        "progress_polls": s.polls,
        "errors": s.errors,
    }


def run_pages_bench(root: Path, entrants: int, loads: int, standings: Standings) -> dict[str, Any]:
    """Make the night under `root` (kept for the server bench), then time its pages.
    `standings(night_folder, standings_file)` is the league's own computation."""
    folders, made = make_night(root, entrants, standings)
    site = root / "site"
    publish(folders.replays_dir(NIGHT), site, folders.league_dir)
    match_id = sorted(folders.replay_ids(NIGHT))[0]
    saved = root / "match.html"  # what `cogolf replay FILE --html` writes
    saved.write_text(
        standalone_from_file(folders.replays_dir(NIGHT) / f"{match_id}.ndjson"), encoding="utf-8"
    )
    with serving(root) as url:
        timings = browser_timings(
            {
                f"night page ({entrants} entrants, served)": f"{url}/nights/{NIGHT}",
                "match page (served)": f"{url}/nights/{NIGHT}/matches/{match_id}",
                "published index.html (file://)": (site / "index.html").as_uri(),
                "published match page (file://)":
                    (site / "matches" / f"{match_id}.html").as_uri(),
                "cogolf replay --html file (file://)": saved.as_uri(),
            },
            loads,
        )  # fmt: skip
    return {
        "entrants": entrants,
        "matches": len(folders.replay_ids(NIGHT)),
        "night": "synthetic (nights_synth: real replay files, random scores)",
        "synthetic_night_seconds": round(made, 2),
        "server_render_ms": round(server_render_ms(folders, loads), 1),
        "page_bytes": len((site / "index.html").read_bytes()),
        "loads": loads,
        "chromium": timings,
    }


def format_pages(doc: dict[str, Any]) -> str:
    lines = [
        f"cogolf bench pages: a {doc['night']} night of {doc['entrants']} entrants, "
        f"{doc['matches']} matches (made in {doc['synthetic_night_seconds']} s); "
        f"median of {doc['loads']} loads",
        f"  night page, server side (read files + render)  {doc['server_render_ms']:8.1f} ms"
        f"   ({doc['page_bytes'] // 1024} KiB)",
        f"  {'in Chromium':<44} {'first render':>12} {'full render':>12}",
    ]
    for label, t in doc["chromium"].items():
        first = "–" if t["first_render_ms"] is None else f"{t['first_render_ms']:.1f}"
        lines.append(f"  {label:<44} {first:>9} ms {t['full_render_ms']:>9.1f} ms")
    return "\n".join(lines)


def format_server_pair(plain: dict[str, Any], watched: dict[str, Any],
                       spectators: dict[str, Any]) -> str:  # fmt: skip
    rows = [
        ("matches/s", "matches_per_second", "{:.3f}"),
        ("holes/s", "holes_per_second", "{:.2f}"),
        ("observation->reply p50 ms", "reply_ms_p50", "{:.2f}"),
        ("observation->reply p99 ms", "reply_ms_p99", "{:.2f}"),
        ("incomplete matches", "incomplete", "{}"),
    ]
    head = f"with {spectators['spectators']} spectators"
    lines = [
        f"bench server: {plain['matches']} concurrent matches x {plain['holes_per_match']} holes,"
        f" sandbox {plain['sandbox']}, median of {plain.get('runs', 1)} alternating runs each",
        f"  {'':<28} {'without':>12} {head:>22}",
    ]
    for label, key, fmt in rows:
        a, b = plain[key], watched[key]
        if key == "incomplete":
            a, b = len(a), len(b)
        lines.append(f"  {label:<28} {fmt.format(a):>12} {fmt.format(b):>22}")
    lines.append(
        f"  spectators: {spectators['page_loads']} night page loads "
        f"(p50 {spectators['page_ms_p50']} ms), {spectators['progress_polls']} progress polls, "
        f"{spectators['errors']} errors"
    )
    return "\n".join(lines)


def _spectate(base: str, count: int, night: str) -> None:
    """`python -m cogolf.pages.nights_bench URL COUNT NIGHT`: a crowd until SIGTERM, then
    its figures as one JSON line."""
    crowd = Spectators(count, night)

    async def main() -> None:
        stop = asyncio.Event()
        asyncio.get_running_loop().add_signal_handler(signal.SIGTERM, stop.set)
        task = asyncio.ensure_future(crowd.crowd(base))
        while len(crowd.page_ms) + crowd.errors < count and not task.done():
            await asyncio.sleep(0.01)
        print("ready", flush=True)
        await stop.wait()
        task.cancel()
        await asyncio.gather(task, return_exceptions=True)

    asyncio.run(main())
    print(json.dumps({"page_ms": crowd.page_ms, "polls": crowd.polls, "errors": crowd.errors}))


if __name__ == "__main__":
    _spectate(sys.argv[1], int(sys.argv[2]), sys.argv[3])
