"""The journal follower of `cogolf play`: notes told while the journal grows, and an end
as soon as the writer says it is done (never a poll interval later)."""

from __future__ import annotations

import asyncio
import json
import time
from pathlib import Path

from cogolf.fallback_notes import FallbackNotes, follow

HEADER = {"kind": "header", "names": ["alice", "bob"], "match_id": "m1"}
FALLBACK = {"kind": "submission", "slot": 1, "hole": 2, "source": "fallback",
            "fallback_cause": "deadline", "errors": ["no reply"]}


def _write(path: Path, *records: dict[str, object]) -> None:
    with open(path, "a", encoding="utf-8") as f:
        for r in records:
            f.write(json.dumps(r) + "\n")


def test_a_finished_writer_ends_the_follower_at_once_after_one_last_read(tmp_path: Path) -> None:
    journal = tmp_path / "m1.ndjson"
    _write(journal, HEADER)
    said: list[str] = []

    async def main() -> float:
        finished = asyncio.Event()
        task = asyncio.create_task(
            follow(journal, FallbackNotes(), said.append, every=60.0, finished=finished)
        )
        await asyncio.sleep(0.05)  # the follower has read the header and waits
        _write(journal, FALLBACK)  # written after its read, without a result line
        start = time.monotonic()
        finished.set()
        async with asyncio.timeout(10):
            await task
        return time.monotonic() - start

    took = asyncio.run(main())
    assert took < 5.0  # the poll interval is 60 s
    assert said == ["bob, hole 2: the server played its fallback (deadline): no reply"]


def test_without_finished_the_follower_ends_on_the_result_line(tmp_path: Path) -> None:
    journal = tmp_path / "m1.ndjson"
    _write(journal, HEADER, FALLBACK, {"kind": "result"})
    said: list[str] = []

    async def main() -> None:
        async with asyncio.timeout(10):
            await follow(journal, FallbackNotes(), said.append, every=60.0)

    asyncio.run(main())
    assert said == ["bob, hole 2: the server played its fallback (deadline): no reply"]


def test_a_follower_that_is_not_finished_keeps_polling(tmp_path: Path) -> None:
    journal = tmp_path / "m1.ndjson"
    _write(journal, HEADER)
    said: list[str] = []

    async def main() -> None:
        finished = asyncio.Event()
        task = asyncio.create_task(
            follow(journal, FallbackNotes(), said.append, every=0.01, finished=finished)
        )
        _write(journal, FALLBACK)
        async with asyncio.timeout(10):
            while not said:  # told by a later poll, the writer not yet done
                await asyncio.sleep(0.01)
        assert not task.done()
        finished.set()
        async with asyncio.timeout(10):
            await task

    asyncio.run(main())
    assert said == ["bob, hole 2: the server played its fallback (deadline): no reply"]
