"""Logging can never break a match: a closed stream loses lines, never raises."""

from __future__ import annotations

import io
import json

import structlog

from cogolf.logs import configure


def test_json_lines_with_bound_context_and_a_closed_stream_is_harmless():
    stream = io.StringIO()
    configure("info", json=True, stream=stream)
    try:
        log = structlog.get_logger("t").bind(match_id="m-1", slot=0, hole=3)
        log.info("hole_resolved", score=[1, -1])
        line = json.loads(stream.getvalue().splitlines()[-1])
        assert line["match_id"] == "m-1" and line["slot"] == 0 and line["hole"] == 3
        assert line["event"] == "hole_resolved" and line["level"] == "info"
        stream.close()
        log.warning("after_close")  # must not raise
    finally:
        configure("info", json=False)


def test_levels_filter():
    stream = io.StringIO()
    configure("warning", json=True, stream=stream)
    try:
        structlog.get_logger("t").info("quiet")
        structlog.get_logger("t").warning("loud")
        assert [json.loads(x)["event"] for x in stream.getvalue().splitlines()] == ["loud"]
    finally:
        configure("info", json=False)
