"""A night's LLM seat is walled: it reaches the gateway with a token of its own, nothing else.

The walls under test are the real ones an LLM seat gets (`league.llmseat`): the
launcher command is built exactly as for a night's seat, and only the program behind
the walls is swapped for a probe that tries what a subverted seat would try.
"""

from __future__ import annotations

import json
import os
import subprocess

import pytest

from cogolf.league.botwall import bot_python
from cogolf.league.llmseat import TOKEN_ENV, LLMSeats, walled_ref
from cogolf.llm.entrant import PREFIX, config_of
from cogolf.llm.fake import FakeProvider
from tests.llm.helpers import KEY, KEY_ENV, table

PROBE = r"""
import json, os, socket, sys, urllib.error, urllib.request
gw, provider, other, night_pid = int(sys.argv[1]), int(sys.argv[2]), sys.argv[3], sys.argv[4]
key = (sys.argv[5] + sys.argv[6]).encode()
out = {"key_in_env": sum(key in v.encode() for v in os.environ.values())}

def models(port, token):
    req = urllib.request.Request(f"http://127.0.0.1:{port}/v1/models",
                                 headers={"authorization": f"Bearer {token}"})
    try:
        with urllib.request.urlopen(req, timeout=5) as r:
            return r.status
    except urllib.error.HTTPError as e:
        return e.code
    except OSError as e:
        return type(getattr(e, "reason", e)).__name__

out["own_token"] = models(gw, os.environ["COGOLF_LLM_TOKEN"])
out["other_token"] = models(gw, other)
out["the_key"] = models(gw, key.decode())
out["provider_direct"] = models(provider, "x")
try:
    socket.create_connection(("1.1.1.1", 443), timeout=3).close()
    out["internet"] = "open"
except OSError as e:
    out["internet"] = type(e).__name__
for name in ("environ", "mem"):
    try:
        with open(f"/proc/{night_pid}/{name}", "rb") as f:
            out[name] = key in f.read(1 << 20)
    except OSError as e:
        out[name] = type(e).__name__
print("PROBE " + json.dumps(out), flush=True)
"""


@pytest.mark.slow
def test_a_walled_llm_seat_reaches_only_the_gateway_with_its_own_token(tmp_path, monkeypatch):
    if os.geteuid() != 0:
        pytest.skip("the bot walls need root")
    monkeypatch.setenv(KEY_ENV, KEY)
    seats = LLMSeats()
    with FakeProvider() as fake:
        policy = PREFIX + json.dumps(table(fake, "openai", "m"))
        try:
            log = tmp_path / "seat.log"
            command, token = seats.command(policy, tmp_path / "t0.ndjson", log)
            _, other = seats.command(policy, tmp_path / "t1.ndjson", tmp_path / "other.log")
            gateway = seats.gateway
            assert gateway is not None
            # The seat's model file names the gateway and the token's variable, never the key.
            ref = walled_ref(config_of(policy.removeprefix(PREFIX)), gateway)
            assert f"127.0.0.1:{gateway.port}" in ref and TOKEN_ENV in ref and KEY not in ref
            assert all(KEY not in part for part in command)
            at = command.index("--")
            half = len(KEY) // 2
            probe = [bot_python(), "-c", PROBE, str(gateway.port), str(fake.port), other,
                     str(os.getpid()), KEY[:half], KEY[half:]]
            done = subprocess.run([*command[:at + 1], *probe], capture_output=True, timeout=60,
                                  env=dict(os.environ, COGOLF_URL="ws://127.0.0.1:9/seat"))
            text = log.read_text()
            (line,) = [ln for ln in text.splitlines() if ln.startswith("PROBE ")]
            seen = json.loads(line.removeprefix("PROBE "))
            assert done.returncode == 0, text
            # Its own token works. A token is a bearer's: another seat's, while that seat
            # plays, would work too, which is why each lives only in its own seat's
            # environment (closed to every other uid, see test_night_secrets) ...
            assert seen["own_token"] == 200
            assert seen["other_token"] == 200
            seats.revoke(other)
            done = subprocess.run([*command[:at + 1], *probe], capture_output=True, timeout=60,
                                  env=dict(os.environ, COGOLF_URL="ws://127.0.0.1:9/seat"))
            seen = json.loads([ln for ln in log.read_text().splitlines()
                               if ln.startswith("PROBE ")][-1].removeprefix("PROBE "))
            assert seen["other_token"] == 401  # ... and it dies with that seat's match
            # The real key is no token here; the provider straight, the outside (no
            # route), the night process's environment and memory: none is reachable.
            assert seen["the_key"] == 401 and seen["own_token"] == 200
            assert seen["provider_direct"] == "ConnectionRefusedError"
            assert seen["internet"] != "open"
            assert seen["key_in_env"] == 0
            assert seen["environ"] == "PermissionError" and seen["mem"] == "PermissionError"
            seats.revoke(token)
        finally:
            seats.close()
    assert not fake.calls  # /v1/models is the gateway's own: nothing reached the provider
