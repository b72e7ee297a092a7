"""Hypothesis against the live seat decoder: random frames never crash the server, and
every bad frame is answered with an `error`."""

from __future__ import annotations

import asyncio
import json
import threading
import time

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from websockets.sync.client import connect

from cogolf.engine import rules
from tests.server.helpers import create, running_server

json_docs = st.recursive(
    st.none() | st.booleans() | st.integers() | st.floats(allow_nan=False) | st.text(max_size=20),
    lambda inner: (
        st.lists(inner, max_size=4)
        | st.dictionaries(
            st.sampled_from(["type", "hole", "impl", "tests", "note", "args"])
            | st.text(max_size=6),
            inner,
            max_size=5,
        )
    ),
    max_leaves=15,
)


@pytest.fixture(scope="module")
def live_seat(tmp_path_factory):
    """One long hole: seat 1 is connected but silent, so the hole stays open for the whole
    test and every frame seat 0 sends is decoded and judged."""
    started = threading.Event()
    stop = threading.Event()
    box = {}

    def serve():
        async def main():
            async with running_server(
                tmp_path_factory.mktemp("fuzz"), connect_timeout=0.2
            ) as server:
                _, urls = create(server, holes=1, hole_deadline_seconds=3000)
                box["urls"] = urls
                box["server"] = server
                started.set()
                while not stop.is_set():
                    await asyncio.sleep(0.05)

        asyncio.run(main())

    thread = threading.Thread(target=serve, daemon=True)
    thread.start()
    assert started.wait(90)
    with connect(box["urls"][1]) as silent, connect(box["urls"][0]) as ws:
        assert json.loads(ws.recv(30))["type"] == "welcome"
        assert json.loads(ws.recv(30))["type"] == "observation"
        yield ws
        assert json.loads(silent.recv(30))["type"] == "welcome"
    stop.set()
    thread.join(30)


def answer(ws) -> dict:
    # Paced to the seat's frame budget, so every frame is read and judged.
    time.sleep(1 / rules.SEAT_FRAMES_PER_SECOND)
    while True:
        msg = json.loads(ws.recv(30))
        if msg["type"] in ("error", "ack"):
            return msg


@settings(
    max_examples=60, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.one_of(json_docs.map(json.dumps), st.text(max_size=200)))
def test_random_text_frames(live_seat, frame):
    live_seat.send(frame)
    assert answer(live_seat)["type"] in ("error", "ack")


@settings(
    max_examples=40, deadline=None, suppress_health_check=[HealthCheck.function_scoped_fixture]
)
@given(st.binary(max_size=200))
def test_random_binary_frames(live_seat, frame):
    live_seat.send(frame)
    msg = answer(live_seat)
    assert msg["type"] == "error" and msg["message"]
