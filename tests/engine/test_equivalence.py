"""The sandbox's speed work changes no verdict: seeded matches, hostile seats included,
give the same digests as the code before it (`equivalence.py` says how they were made)."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest

from tests.engine import equivalence

FIXTURE = Path(__file__).with_name("verdicts_main.json")


@pytest.mark.slow
def test_seeded_matches_decide_exactly_as_before():
    doc = json.loads(FIXTURE.read_text())
    assert doc["holes"] == equivalence.HOLES
    assert len(doc["digests"]) == len(equivalence.SEEDS) >= 24
    found = asyncio.run(equivalence.play_all())
    differ = sorted(int(s) for s in found if found[s] != doc["digests"][s])
    assert not differ, f"matches decided differently: seeds {differ}"


def test_the_digest_leaves_out_cpu_figures_and_the_wall_clock():
    """The digest covers what a defender returned, not just the score."""
    line = '{"kind":"test_verdict","observed":"timeout: used 0.31 s of CPU (limit 0.25 s)"}'
    assert equivalence._normal(json.loads(line))["observed"] == \
        "timeout: used ? s of CPU (limit 0.25 s)"
    assert "at" not in equivalence._normal({"at": 1.0, "hole": 1})
