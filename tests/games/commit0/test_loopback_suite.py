"""A library's suite may start local servers (tornado's, pytest-httpbin's): its tests
run on a loopback of their own, and the host's loopback stays out of reach."""

from __future__ import annotations

import asyncio
import shutil
from pathlib import Path

import pytest

from cogolf.games.commit0.prepare import prepare
from cogolf.games.commit0.task import Commit0Task
from tests.games.golf.hostile import listener

from .test_hostile import TEXTKIT, score_cli, with_init

SERVED_TEST = '''
import http.server
import threading
import urllib.request

from textkit import slugify


class Slugs(http.server.BaseHTTPRequestHandler):
    def do_GET(self):
        body = slugify(self.path.strip("/").replace("_", " ")).encode()
        self.send_response(200)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


def test_slugs_served_over_a_local_server():
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Slugs)
    thread = threading.Thread(target=server.serve_forever)
    thread.start()
    try:
        url = f"http://localhost:{server.server_address[1]}/Hello_World"
        with urllib.request.urlopen(url, timeout=10) as reply:
            assert reply.read() == b"hello-world"
    finally:
        server.shutdown()
        thread.join()
'''


@pytest.fixture(scope="module")
def task(tmp_path_factory: pytest.TempPathFactory) -> Commit0Task:
    source = tmp_path_factory.mktemp("served") / "textkit"
    shutil.copytree(TEXTKIT, source)
    (source / "tests" / "test_served.py").write_text(SERVED_TEST)
    out = tmp_path_factory.mktemp("task") / "task"
    return asyncio.run(prepare(str(source), out, time_limit_seconds=120))


def test_a_suite_that_serves_locally_keeps_its_tests(task: Commit0Task, tmp_path: Path) -> None:
    served = [i for i in task.reference_ids if "test_served" in i]
    assert served == ["tests.test_served::test_slugs_served_over_a_local_server"]
    result, _ = score_cli(task, TEXTKIT, tmp_path / "original.json")
    assert result["status"] == "ok" and result["pass_rate"] == 1.0, result


def test_library_code_cannot_reach_the_scorers_loopback(task: Commit0Task, tmp_path: Path) -> None:
    with listener() as (port, seen):  # a server on the scorer's own 127.0.0.1
        prelude = (
            "import socket\n"
            "try:\n"
            f"    socket.create_connection(('127.0.0.1', {port}), timeout=2).sendall(b'x')\n"
            "except OSError:\n"
            "    pass\n"
        )
        result, _ = score_cli(task, with_init(task, tmp_path, prelude), tmp_path / "out.json")
        assert seen == []
    assert result["pass_rate"] == 0.0, result
