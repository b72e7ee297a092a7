"""A bot or a server that cannot connect says so in one line: where, why, what to do.

`cogolf bot` against a port nobody listens on, a host that does not resolve, an
HTTP server that is no Cogolf server, or with an `http://` URL; `cogolf serve` on
a port already taken or a host this machine does not have. Each is one line on
stderr, no traceback, no line repeated per retry.
"""

from __future__ import annotations

import socket
import subprocess
import threading
import time
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from cogolf.bots.client import FIRST_WAIT
from tests.cli.run import cogolf


def closed_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def bot(url: str) -> tuple[subprocess.CompletedProcess[str], float]:
    start = time.monotonic()
    done = cogolf("bot", "--url", url, timeout=60)
    return done, time.monotonic() - start


def one_line(done: subprocess.CompletedProcess[str]) -> str:
    assert "Traceback" not in done.stderr, done.stderr
    lines = done.stderr.strip().splitlines()
    assert len(lines) == 1, done.stderr
    return lines[0]


class _Plain(BaseHTTPRequestHandler):
    """Some other web server on the port: a page, never a websocket."""

    protocol_version = "HTTP/1.1"

    def do_GET(self) -> None:
        self.send_response(200)
        self.send_header("content-length", "5")
        self.end_headers()
        self.wfile.write(b"hello")

    def log_message(self, *args: object) -> None:
        pass


@pytest.mark.slow
def test_a_bot_that_cannot_reach_its_server_says_where_and_why_after_a_short_wait():
    port = closed_port()
    done, seconds = bot(f"ws://127.0.0.1:{port}/matches/m-1/player?slot=0&token=T")
    assert done.returncode == 1
    assert one_line(done) == (
        f"cogolf bot: cannot reach a Cogolf server at 127.0.0.1:{port} (tried for "
        f"{FIRST_WAIT:.0f} s): nothing listens there (connection refused): is the server "
        "running, on that port?"
    )
    assert FIRST_WAIT <= seconds < FIRST_WAIT + 5  # the first wait, not the 120 s of a drop
    web = HTTPServer(("127.0.0.1", 0), _Plain)
    threading.Thread(target=web.serve_forever, daemon=True).start()
    try:
        done, _ = bot(f"ws://127.0.0.1:{web.server_port}/matches/m-1/player?slot=0&token=T")
    finally:
        web.shutdown()
    assert done.returncode == 1
    assert one_line(done).endswith("it answered HTTP 200, not a seat: is this the server's "
                                   "port, and the URL the one it gave?")  # fmt: skip


def test_an_http_url_or_no_url_at_all_is_refused_at_once():
    done, seconds = bot("http://127.0.0.1:8080/matches/m-1/player?slot=0&token=T")
    assert done.returncode == 2 and seconds < FIRST_WAIT
    assert one_line(done).startswith("cogolf bot: seat URLs start with ws:// (or wss://), not "
                                     "http://: use the seat URL the server gave")  # fmt: skip
    done, _ = bot("127.0.0.1:8080")
    assert done.returncode == 2
    assert "is not a seat URL: expected ws://HOST:PORT/matches/MATCH_ID/player" in one_line(done)
    done, _ = bot("ws://127.0.0.1:80x/matches/m-1/player")
    assert done.returncode == 2 and one_line(done).endswith("the port is not a number")


def test_serve_on_a_port_in_use_or_an_address_it_lacks_is_one_line():
    with socket.create_server(("127.0.0.1", 0)) as taken:
        port = taken.getsockname()[1]
        done = cogolf("serve", "--port", str(port), timeout=60)
    assert done.returncode == 2
    assert one_line(done) == (
        f"cogolf: cannot listen on 127.0.0.1:{port}: the address is already in use (is another "
        "server running there?); choose another --port, or 0 for any free one"
    )
    done = cogolf("serve", "--host", "192.0.2.1", "--port", "0", timeout=60)  # TEST-NET-1
    assert done.returncode == 2
    assert one_line(done).endswith("this machine has no such address: check --host")
    done = cogolf("serve", "--port", "65536", timeout=60)
    assert done.returncode == 2
    assert one_line(done) == "cogolf: cannot listen on port 65536: ports are 0 to 65535"
