"""The league's one call into replay verification.

Standings count a replay only once it re-proves (`cogolf replay --verify` uses
the same function). Cached verdicts carry `VERIFIER`, so a change of the
verifier (bump it) re-checks every replay instead of trusting old verdicts.
"""

from __future__ import annotations

from pathlib import Path

from cogolf.deck import Deck
from cogolf.sandbox.api import Sandbox
from cogolf.verify import verify_replay

VERIFIER = "cogolf.verify.verify_replay/2"


async def verify_file(path: Path, deck: Deck, sandbox: Sandbox) -> str:
    """ "" when the replay verifies, else its first divergence."""
    problems = await verify_replay(path, deck, sandbox)
    return problems[0] if problems else ""
