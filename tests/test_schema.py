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
