"""Helpers for the hostile-file tests: a loopback listener that records connections."""

from __future__ import annotations

import socket
import threading
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def listener() -> Iterator[tuple[int, list[bytes]]]:
    """A real TCP server on 127.0.0.1; yields its port and what connections sent."""
    srv = socket.socket()
    srv.bind(("127.0.0.1", 0))
    srv.listen(8)
    srv.settimeout(0.2)
    got: list[bytes] = []
    stop = threading.Event()

    def serve() -> None:
        while not stop.is_set():
            try:
                conn, _ = srv.accept()
            except OSError:
                continue
            with conn:
                got.append(conn.recv(100) or b"connected")

    t = threading.Thread(target=serve, daemon=True)
    t.start()
    try:
        yield srv.getsockname()[1], got
    finally:
        stop.set()
        t.join()
        srv.close()
