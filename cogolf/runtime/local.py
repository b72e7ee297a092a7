"""Setting up a match: the seeded draw, the replay header, and a local run.

`new_match` and `replay_header` are shared by every way of playing (local,
server, league) so that a match is described the same way in every journal.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from pathlib import Path

import msgspec

from cogolf import GAME_VERSION, PROTOCOL
from cogolf import messages as m
from cogolf.deck import Deck
from cogolf.engine.match import Match, MatchConfig, hash_seed_for
from cogolf.replay import ReplayWriter
from cogolf.runtime.driver import MatchDriver
from cogolf.runtime.seats import Seat
from cogolf.sandbox.api import Limits, Sandbox
from cogolf.text import clip


def new_match(deck: Deck, config: MatchConfig, match_id: str) -> Match:
    """The match, with its hash seed fixed (from its seed unless the config gives one)."""
    if config.hash_seed is None:
        config = msgspec.structs.replace(config, hash_seed=hash_seed_for(config.seed))
    keys = deck.draw(config.seed, config.holes)
    return Match(match_id=match_id, config=config, keys=keys, specs={k: deck.spec(k) for k in keys})


def replay_header(match: Match, deck: Deck, sandbox: Sandbox) -> m.ReplayHeader:
    return m.ReplayHeader(
        game_version=GAME_VERSION,
        protocol=PROTOCOL,
        match_id=match.match_id,
        deck_name=deck.name,
        deck_version=deck.version,
        deck_digest=deck.digest,
        seed=match.config.seed,
        names=[clip(n, 64) for n in match.config.names],
        aliases=list(match.aliases),
        holes=list(match.keys),
        config=msgspec.to_builtins(match.config),
        sandbox=sandbox.describe(),
        started_at=time.time(),
    )


async def run_match(
    deck: Deck,
    config: MatchConfig,
    match_id: str,
    seats: Sequence[Seat],
    sandbox: Sandbox,
    replay_path: Path,
    *,
    start_sandbox: bool = False,
) -> m.MatchResult:
    """Play a whole match and journal it. `start_sandbox` starts it inside the match's
    protection, so a sandbox that cannot start still yields a complete replay."""
    match = new_match(deck, config, match_id)
    with ReplayWriter(replay_path) as writer:
        writer.write(replay_header(match, deck, sandbox))
        driver = MatchDriver(match, deck, seats, sandbox, writer, limits=Limits())
        return await driver.run(sandbox.start if start_sandbox else None)
