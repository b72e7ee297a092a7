"""A real honest replay, a real started sandbox shared by many verifications, and mutations.

Verifying re-resolves holes through the sandbox; Hypothesis runs hundreds of
verifications, so one sandbox is started once in a background event loop and
its real outcomes are remembered per (spec, both plays): a mutated file whose
submissions are unchanged costs no sandbox run.
"""

from __future__ import annotations

import asyncio
import json
import threading
from pathlib import Path
from typing import Any

from cogolf.bots.policy import load_policy
from cogolf.deck import load
from cogolf.engine.hole import HoleOutcome
from cogolf.engine.intake import Accepted
from cogolf.engine.match import MatchConfig
from cogolf.runtime.local import run_match
from cogolf.runtime.seats import InProcessSeat
from cogolf.sandbox import make_sandbox
from cogolf.verify import VerifyReport, sandbox_resolver, verify_replay_file

DECK = load()


def play_in_process(path: Path, *, seed: int = 3, holes: int = 2, seats: Any = None) -> Path:
    config = MatchConfig(seed=seed, holes=holes, names=("literalist", "pedant"))
    seats = seats or [InProcessSeat(i, load_policy(n)) for i, n in enumerate(config.names)]

    async def main() -> None:
        sandbox = make_sandbox("fork")
        try:
            await run_match(DECK, config, path.stem, seats, sandbox, path, start_sandbox=True)
        finally:
            await sandbox.close()

    asyncio.run(main())
    return path


class SharedSandbox:
    """One started sandbox on its own loop thread; `verify(path)` from any thread."""

    def __init__(self) -> None:
        self.loop = asyncio.new_event_loop()
        self.thread = threading.Thread(target=self.loop.run_forever, daemon=True)
        self.thread.start()
        self.sandbox = make_sandbox("fork")
        self._call(self.sandbox.start())
        self.inner = sandbox_resolver(DECK, self.sandbox)
        self.cache: dict[str, HoleOutcome] = {}
        self.runs = 0

    def _call(self, coro: Any) -> Any:
        return asyncio.run_coroutine_threadsafe(coro, self.loop).result(120)

    async def resolve(
        self, key: str, subs: tuple[Accepted, Accepted], hash_seed: int | None = None
    ) -> HoleOutcome:
        memo = repr((key, subs, hash_seed))
        if memo not in self.cache:
            self.runs += 1
            fut = asyncio.run_coroutine_threadsafe(self.inner(key, subs, hash_seed), self.loop)
            self.cache[memo] = await asyncio.wrap_future(fut)
        return self.cache[memo]

    def verify(self, path: Path) -> VerifyReport:
        keys = frozenset(self.sandbox.describe())
        return asyncio.run(verify_replay_file(path, DECK, self.resolve, keys))

    def close(self) -> None:
        self._call(self.sandbox.close())
        self.loop.call_soon_threadsafe(self.loop.stop)
        self.thread.join(10)


def lines_of(path: Path) -> list[str]:
    return path.read_text().splitlines()


def write_lines(path: Path, lines: list[str]) -> Path:
    path.write_text("".join(line + "\n" for line in lines))
    return path


def edit(lines: list[str], index: int, change: Any) -> list[str]:
    """`lines` with line `index` decoded, changed in place by `change(doc)`, compact again."""
    doc = json.loads(lines[index])
    change(doc)
    out = list(lines)
    out[index] = json.dumps(doc, separators=(",", ":"), ensure_ascii=False)
    return out


def index_of(lines: list[str], kind: str, nth: int = 0, **fields: Any) -> int:
    hits = [
        i
        for i, line in enumerate(lines)
        if (doc := json.loads(line))["kind"] == kind
        and all(doc.get(k) == v for k, v in fields.items())
    ]
    return hits[nth]
