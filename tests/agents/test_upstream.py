"""The gateway's POST to a provider: kept-alive connections reused, one the provider closed
meanwhile replaced, chunked replies read whole, the size cap pinned, garbage refused."""

from __future__ import annotations

import asyncio
import socket
import threading
from collections.abc import Callable, Iterator

import pytest

from cogolf.agents.upstream import Upstream, UpstreamError

OK = b"HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok"


def _read_request(conn: socket.socket) -> bytes:
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(65536)
        if not chunk:
            return b""
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = int(head.lower().split(b"content-length: ")[1].split(b"\r\n")[0])
    while len(body) < length:
        body += conn.recv(65536)
    return head


@pytest.fixture
def server() -> Iterator[Callable[[Callable[[socket.socket, int], None]], str]]:
    """A raw provider: `serve(handler)` calls handler(conn, n) for its n-th connection."""
    listener = socket.create_server(("127.0.0.1", 0))
    stop = threading.Event()
    seen = {"connections": 0}

    def start(handler: Callable[[socket.socket, int], None]) -> str:
        def loop() -> None:
            listener.settimeout(0.2)
            while not stop.is_set():
                try:
                    conn, _ = listener.accept()
                except OSError:
                    continue
                seen["connections"] += 1
                threading.Thread(target=handler, args=(conn, seen["connections"]),
                                 daemon=True).start()
        threading.Thread(target=loop, daemon=True).start()
        return f"http://127.0.0.1:{listener.getsockname()[1]}/v1/x"

    start.seen = seen  # type: ignore[attr-defined]
    yield start
    stop.set()
    listener.close()


def _post(url: str, times: int, limit: int = 1 << 20) -> list[tuple[int, bytes] | str]:
    async def run() -> list[tuple[int, bytes] | str]:
        up = Upstream()
        out: list[tuple[int, bytes] | str] = []
        for _ in range(times):
            try:
                out.append(await up.post(url, {"content-type": "application/json"}, b"{}", limit))
            except OSError as exc:
                out.append(f"{type(exc).__name__}: {exc}")
        await up.close()
        return out
    return asyncio.run(run())


def test_a_kept_alive_connection_is_reused_and_one_closed_meanwhile_replaced(server):
    def handler(conn: socket.socket, n: int) -> None:
        # The first connection answers twice, then closes while idle; later ones answer on.
        for _ in range(2 if n == 1 else 100):
            if not _read_request(conn):
                break
            conn.sendall(OK)
        conn.close()

    url = server(handler)
    assert _post(url, 4) == [(200, b"ok")] * 4
    assert server.seen["connections"] == 2


def test_a_chunked_reply_is_read_whole_and_the_cap_is_pinned(server):
    body = b"x" * 100

    def handler(conn: socket.socket, n: int) -> None:
        while _read_request(conn):
            conn.sendall(b"HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n"
                         b"32\r\n" + body[:50] + b"\r\n32\r\n" + body[50:] + b"\r\n0\r\n\r\n")

    url = server(handler)
    assert _post(url, 1, limit=100) == [(200, body)]  # the last size accepted
    (refused,) = _post(url, 1, limit=99)  # the first refused
    assert refused == "UpstreamError: the reply is over 99 bytes"


def test_garbage_or_a_close_without_a_reply_is_an_upstream_error(server):
    def handler(conn: socket.socket, n: int) -> None:
        _read_request(conn)
        if n % 2:
            conn.sendall(b"SSH-2.0-OpenSSH\r\n\r\n")
        conn.close()

    url = server(handler)
    first, second = _post(url, 2)
    assert isinstance(first, str) and first.startswith("UpstreamError: the provider's reply is "
                                                       "not HTTP/1.1")
    assert second == "UpstreamError: the provider closed the connection without a reply"
    assert isinstance(UpstreamError("x"), OSError)  # the gateway's provider failure
