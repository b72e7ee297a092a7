"""A hostile chat provider on loopback: raw sockets, so a reply can be anything at all.

Each connection reads one HTTP request (kept with its raw headers) and answers it
with the next scripted behaviour: a crafted response, a trickle, a hang after the
headers, silence, a reset. The real openai and anthropic clients talk to it.
"""

from __future__ import annotations

import json
import socket
import struct
import threading
import time
from collections import deque
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

Behaviour = Callable[[socket.socket, threading.Event], None]


@dataclass(frozen=True)
class Request:
    head: bytes  # request line and headers, raw
    body: bytes


def openai_body(text: str, **usage: Any) -> dict[str, Any]:
    return {
        "id": "x",
        "object": "chat.completion",
        "created": 0,
        "model": "m",
        "usage": {"prompt_tokens": 1, "completion_tokens": 1, **usage},
        "choices": [
            {"index": 0, "finish_reason": "stop", "message": {"role": "assistant", "content": text}}
        ],
    }


def respond(
    body: bytes | dict[str, Any], status: int = 200, headers: dict[str, str] | None = None
) -> Behaviour:
    data = body if isinstance(body, bytes) else json.dumps(body).encode()

    def run(conn: socket.socket, stop: threading.Event) -> None:
        lines = [f"HTTP/1.1 {status} X", "content-type: application/json"]
        lines += [f"{k}: {v}" for k, v in (headers or {}).items()]
        lines += [f"content-length: {len(data)}", "connection: close", "", ""]
        conn.sendall("\r\n".join(lines).encode() + data)

    return run


def trickle(every: float = 0.1) -> Behaviour:
    """Headers, then one byte of a body that never ends, every `every` seconds."""

    def run(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"content-length: 100000000\r\n\r\n{"
        )
        while not stop.wait(every):
            conn.sendall(b" ")

    return run


def endless(chunk: int = 1 << 20) -> Behaviour:
    """A chunked body that keeps coming as fast as the client reads it."""

    def run(conn: socket.socket, stop: threading.Event) -> None:
        conn.sendall(
            b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\n"
            b"transfer-encoding: chunked\r\n\r\n"
        )
        piece = b"%x\r\n" % chunk + b" " * chunk + b"\r\n"
        while not stop.is_set():
            conn.sendall(piece)

    return run


def hang_after_headers(conn: socket.socket, stop: threading.Event) -> None:
    conn.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: application/json\r\ncontent-length: 10\r\n\r\n")
    stop.wait()


def silence(conn: socket.socket, stop: threading.Event) -> None:
    stop.wait()


def reset(conn: socket.socket, stop: threading.Event) -> None:
    conn.setsockopt(socket.SOL_SOCKET, socket.SO_LINGER, struct.pack("ii", 1, 0))


class HostileProvider:
    def __init__(self, default: Behaviour | None = None) -> None:
        self.default = default
        self.queue: deque[Behaviour] = deque()
        self.requests: list[Request] = []
        self.stop = threading.Event()
        self.sock = socket.socket()
        self.sock.bind(("127.0.0.1", 0))
        self.sock.listen(64)
        self.port = self.sock.getsockname()[1]
        self._lock = threading.Lock()

    @property
    def url(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def script(self, *behaviours: Behaviour) -> None:
        with self._lock:
            self.queue.extend(behaviours)

    def _serve(self) -> None:
        while not self.stop.is_set():
            try:
                conn, _ = self.sock.accept()
            except OSError:
                return
            threading.Thread(target=self._one, args=(conn,), daemon=True).start()

    def _one(self, conn: socket.socket) -> None:
        with conn:
            try:
                data = b""
                while b"\r\n\r\n" not in data:
                    more = conn.recv(65536)
                    if not more:
                        return
                    data += more
                head, _, body = data.partition(b"\r\n\r\n")
                length = 0
                for line in head.split(b"\r\n")[1:]:
                    name, _, value = line.partition(b":")
                    if name.strip().lower() == b"content-length":
                        length = int(value)
                while len(body) < length:
                    more = conn.recv(65536)
                    if not more:
                        break
                    body += more
                with self._lock:
                    self.requests.append(Request(head, body))
                    behaviour = self.queue.popleft() if self.queue else self.default
                if behaviour is not None:
                    behaviour(conn, self.stop)
            except OSError:
                pass

    def __enter__(self) -> HostileProvider:
        threading.Thread(target=self._serve, daemon=True, name="hostile-llm").start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop.set()
        self.sock.close()
        time.sleep(0.05)


def cycle(*behaviours: Behaviour) -> Behaviour:
    """Each request gets the next of `behaviours`, round and round."""
    lock, turn = threading.Lock(), [0]

    def run(conn: socket.socket, stop: threading.Event) -> None:
        with lock:
            behaviour = behaviours[turn[0] % len(behaviours)]
            turn[0] += 1
        behaviour(conn, stop)

    return run
