"""Non-blocking pipe ends driven by the event loop, with hard caps.

The parent reads a child's result descriptor through `LineReader`, which never
buffers more than one line cap nor accepts more than the batch's total cap, so a
child that floods its pipe costs the server a bounded amount of memory.

A lockstep answer is usually ready within microseconds of its request, so a read
may first wait for it in a short blocking `select` (bounded by `spin`) before it
falls back to the event loop: that saves a future, a timer and a task wake-up per
call, at the price of holding the loop for at most `spin` seconds.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import select
from enum import Enum

_FD_SETSIZE = 1024  # select() takes no descriptor at or above this


class ReadEvent(Enum):
    TIMEOUT = "timeout"
    EOF = "eof"
    OVERFLOW = "overflow"


class LineReader:
    def __init__(self, fd: int, *, max_line: int, max_total: int) -> None:
        self._fd = fd
        self._loop = asyncio.get_running_loop()
        self._buf = bytearray()
        self._max_line = max_line
        self._max_total = max_total
        self._total = 0
        self._eof = False
        self.overflow = ""
        self._waiter: asyncio.Future[None] | None = None
        os.set_blocking(fd, False)
        self._loop.add_reader(fd, self._on_readable)
        self._watching = True

    def set_caps(self, *, max_line: int, max_total: int) -> None:
        """New caps for a reader made before its batch was known (a pre-forked child);
        what it already read does not count against the new total."""
        self._max_line = max_line
        self._max_total = max_total
        self._total = len(self._buf)

    def _stop(self) -> None:
        if self._watching:
            self._loop.remove_reader(self._fd)
            self._watching = False

    def _wake(self) -> None:
        if self._waiter is not None and not self._waiter.done():
            self._waiter.set_result(None)

    def _on_readable(self) -> None:
        if self._ingest():
            self._wake()

    def _ingest(self) -> bool:
        """Take what the pipe holds now, within the caps; False if it held nothing."""
        if not self._watching:  # past EOF or a cap: nothing more is read
            return False
        try:
            data = os.read(self._fd, 1 << 16)
        except (BlockingIOError, InterruptedError):
            return False
        except OSError:
            data = b""
        if not data:
            self._eof = True
            self._stop()
        else:
            self._total += len(data)
            self._buf += data
            if self._total > self._max_total:
                self.overflow = f"results exceed {self._max_total} bytes"
                self._stop()
        return True

    def _take_line(self) -> bytes | None:
        idx = self._buf.find(b"\n")
        if idx < 0:
            if len(self._buf) > self._max_line:
                self.overflow = f"result line longer than {self._max_line} bytes"
            return None
        if idx > self._max_line:
            self.overflow = f"result line longer than {self._max_line} bytes"
            return None
        line = bytes(self._buf[:idx])
        del self._buf[: idx + 1]
        return line

    def _wait_briefly(self, timeout: float) -> bool:
        """Block up to `timeout` seconds for the pipe to become readable, then read it;
        False if it stayed empty (or cannot be waited on this way)."""
        if not self._watching or self._fd >= _FD_SETSIZE:
            return False
        try:
            ready, _, _ = select.select([self._fd], [], [], timeout)
        except (OSError, ValueError):
            return False
        return bool(ready) and self._ingest()

    async def readline(self, timeout: float, *, spin: float = 0.0) -> bytes | ReadEvent:
        """The next complete line, or why there is none within `timeout` seconds;
        the first `spin` seconds of the wait block the event loop (see above)."""
        spin_until = self._loop.time() + min(spin, timeout)
        while True:
            line = self._take_line()
            if self.overflow:
                return ReadEvent.OVERFLOW
            if line is not None:
                return line
            if self._eof:
                return ReadEvent.EOF
            if timeout <= 0:
                return ReadEvent.TIMEOUT
            if spin > 0:
                start = self._loop.time()
                if start < spin_until and self._wait_briefly(spin_until - start):
                    timeout -= self._loop.time() - start
                    continue
                spin = 0.0
                timeout -= self._loop.time() - start
                if timeout <= 0:
                    return ReadEvent.TIMEOUT
            waiter = self._loop.create_future()
            self._waiter = waiter
            handle = self._loop.call_later(timeout, self._wake)
            start = self._loop.time()
            try:
                await waiter
            finally:
                handle.cancel()
                self._waiter = None
            timeout -= self._loop.time() - start

    def close(self) -> None:
        self._stop()
        with contextlib.suppress(OSError):
            os.close(self._fd)


class PipeWriter:
    def __init__(self, fd: int) -> None:
        self._fd = fd
        self._loop = asyncio.get_running_loop()
        os.set_blocking(fd, False)

    async def write(self, data: bytes, timeout: float) -> bool:
        """Write all of `data`; False if the reader is gone or too slow."""
        view = memoryview(data)
        deadline = self._loop.time() + timeout
        while view:
            try:
                n = os.write(self._fd, view)
                view = view[n:]
                continue
            except (BlockingIOError, InterruptedError):
                pass
            except OSError:
                return False
            remaining = deadline - self._loop.time()
            if remaining <= 0:
                return False
            ready = self._loop.create_future()
            self._loop.add_writer(self._fd, lambda f=ready: f.done() or f.set_result(None))
            try:
                await asyncio.wait_for(ready, remaining)
            except TimeoutError:
                return False
            finally:
                self._loop.remove_writer(self._fd)
        return True

    def close(self) -> None:
        with contextlib.suppress(OSError):
            os.close(self._fd)
