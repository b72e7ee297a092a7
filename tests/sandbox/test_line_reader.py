"""The result-pipe reader on real pipes, both through its short wait and the event loop."""

from __future__ import annotations

import asyncio
import os
import threading
import time

from cogolf.sandbox.channel import LineReader, ReadEvent


def run(coro):
    return asyncio.run(coro)


async def _reader(fd: int, **caps: int) -> LineReader:
    return LineReader(
        fd, max_line=caps.get("max_line", 1024), max_total=caps.get("max_total", 4096)
    )


def _write_later(fd: int, data: bytes, delay: float) -> threading.Thread:
    def go() -> None:
        time.sleep(delay)
        os.write(fd, data)

    t = threading.Thread(target=go)
    t.start()
    return t


def test_lines_arrive_through_the_short_wait_and_through_the_loop():
    r, w = os.pipe()

    async def go():
        reader = await _reader(r)
        os.write(w, b"one\ntwo\n")
        first = await reader.readline(1.0, spin=0.0005)
        second = await reader.readline(1.0, spin=0.0005)
        late = _write_later(w, b"thr", 0.01)  # a line split past the short wait
        tail = _write_later(w, b"ee\n", 0.03)
        third = await reader.readline(1.0, spin=0.0005)
        late.join()
        tail.join()
        silent = await reader.readline(0.02, spin=0.0005)
        os.close(w)
        end = await reader.readline(1.0, spin=0.0005)
        return first, second, third, silent, end

    try:
        first, second, third, silent, end = run(go())
    finally:
        os.close(r)
    assert (first, second, third) == (b"one", b"two", b"three")
    assert silent is ReadEvent.TIMEOUT
    assert end is ReadEvent.EOF


def test_caps_hold_on_the_short_wait():
    r, w = os.pipe()

    async def go():
        reader = await _reader(r, max_line=8, max_total=64)
        os.write(w, b"x" * 20 + b"\n")
        return await reader.readline(1.0, spin=0.0005)

    try:
        got = run(go())
    finally:
        os.close(r)
        os.close(w)
    assert got is ReadEvent.OVERFLOW
