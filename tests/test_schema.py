"""`cogolf schema` describes the protocol a bot author has to speak."""

from __future__ import annotations

import json
import subprocess
import sys


def test_schema_names_every_message():
    out = subprocess.run(
        [sys.executable, "-m", "cogolf", "schema"], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0
    doc = json.loads(out.stdout)
    defs = doc["seat_to_server"]["$defs"]
    assert set(defs["Submission"]["required"]) >= {"type", "hole", "impl"}
    server = json.dumps(doc["server_to_seat"])
    for name in ("Welcome", "Observation", "Ack", "Error", "Done", "Rules", "HistoryEntry"):
        assert f'"{name}"' in server
    assert "TestVerdict" in json.dumps(doc["replay_record"])
    assert "WatchSnapshot" in json.dumps(doc["server_to_spectator"])
    assert "GolfSubmission" in json.dumps(doc["golf"]["seat_to_server"])


def test_a_live_snapshot_is_what_the_published_types_describe():
    """Spectators of a live match get no real names and no ambiguity notes: the schema
    must not call them required, and the live document decodes as a WatchSnapshot."""
    import msgspec

    from cogolf import messages as m
    from cogolf.server.disclosure import View

    hole = m.HoleScore(hole=1, spec_key="k", score=[1, -1], cumulative=[1, -1], breaches=[1, 0],
                       par_fails=[0, 0], illegal_tests=[0, 0], ambiguity="the hidden reading")
    snap = m.WatchSnapshot(match_id="m-1", status="playing", hole=2, holes=9, scores=[1, -1],
                           aliases=["Ash", "Basil"], names=["alice", "bob"], resolved=[hole])
    live = View("cogolf", full=False).snapshot(snap)
    assert "names" not in live and "ambiguity" not in live["resolved"][0]
    decoded = msgspec.convert(live, m.WatchSnapshot)
    assert decoded.names == [] and decoded.resolved[0].ambiguity == ""
    schema = msgspec.json.schema(m.WatchSnapshot)
    assert "names" not in schema["$defs"]["WatchSnapshot"]["required"]
    assert "ambiguity" not in schema["$defs"]["HoleScore"]["required"]
