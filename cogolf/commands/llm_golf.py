"""An LLM entrant's golf in a league night: its live plays become its submission folder.

A night scores golf from each entrant's submission files. An `llm` entrant has
none, so before the night starts it plays each of the night's courses live
(`cogolf bot --policy llm:...` on a loopback server, walled and calling its model
through the night's gateway: `league.llmseat`), and the source it submitted for
each hole is written as that hole's file in
`replays/<night>/llm/golf/<entrant>/<course>/`. The night then scores that folder
exactly like everyone else's (same runners, private tests and signature). A
course already played (its folder is complete) is not played again.
"""

from __future__ import annotations

import asyncio
import json
import os
import shutil
from collections.abc import Callable
from dataclasses import replace
from pathlib import Path

import msgspec

from cogolf.games.golf.courses import get_course
from cogolf.games.golf.holes import load_holes
from cogolf.games.golf.live import play_with_bot_process
from cogolf.games.golf.play import FALLBACKS_FILE
from cogolf.games.golf.runners.base import RunLimits
from cogolf.games.golf.settings import GolfSettings
from cogolf.games.golf.wire import GolfConfig
from cogolf.league.llmseat import LLMSeats
from cogolf.league.night import Entrant, Night
from cogolf.llm.entrant import PREFIX, llm_policy
from cogolf.llm.transcript import TRANSCRIPTS_DIR, transcript_path
from cogolf.matchid import new_match_id

GOLF_DIR = "golf"
COMPLETE = ".complete"  # written last: the folder holds every hole the model played


async def _play_course(
    night: Night, entrant: str, policy: str, course: str, folder: Path, replays: Path,
    seats: LLMSeats,
) -> None:
    golf = night.sections["golf"]
    config = GolfConfig(
        course=course,
        model=entrant,
        hole_deadline_seconds=night.hole_deadline,
        retry_deadline_seconds=night.retry_deadline,
        per_test_seconds=golf.per_test_seconds,
        per_hole_seconds=golf.per_hole_seconds,
    )
    settings = GolfSettings(
        results_dir=replays / "results",
        limits=RunLimits(
            per_test_seconds=golf.per_test_seconds, per_hole_seconds=golf.per_hole_seconds
        ),
    )
    match_id = new_match_id(f"golf-{course}"[:40])
    (replays / "logs").mkdir(parents=True, exist_ok=True)
    command, token = seats.command(policy, transcript_path(replays / TRANSCRIPTS_DIR, match_id, 0),
                                   replays / "logs" / f"{match_id}.log")
    try:
        played = await play_with_bot_process(config, policy, settings, replays,
                                             match_id=match_id, command=command)
    finally:
        seats.revoke(token)
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    holes, rules = load_holes(), get_course(course)
    fallbacks: dict[str, str] = {}
    for line in played.replay_path.read_text(encoding="utf-8").splitlines():
        record = json.loads(line)
        if record.get("kind") != "submission":
            continue
        key = holes.holes[int(record["hole"]) - 1].key
        if record.get("origin") != "seat":  # counted as the entrant's fallbacks in the table
            fallbacks[key] = str(record.get("fallback_cause") or "fallback")
        if isinstance(record.get("source"), str):
            (folder / rules.file_name(key)).write_text(record["source"], encoding="utf-8")
    (folder / FALLBACKS_FILE).write_text(json.dumps(fallbacks, sort_keys=True) + "\n")
    (folder / COMPLETE).write_text(played.replay_path.name + "\n")


def golf_policy(e: Entrant) -> str | None:
    """The LLM policy that plays `e`'s golf live: an `llm` entrant's own, or the model of
    an agent entrant (golf is played as LLM players play it); None for anyone else."""
    if e.policy and e.policy.startswith(PREFIX):
        return e.policy
    if e.agent is not None and not e.plays_cogolf:
        table = {k: v for k, v in msgspec.structs.asdict(e.agent.llm).items()
                 if v is not None and v != {}}
        return llm_policy(table, Path("."))
    return None


def play_llm_golf(night: Night, replays_root: Path, report: Callable[[str], None]) -> Night:
    """The night with each `llm` entrant's (and agent entrant's) golf template pointing
    at its played courses."""
    if "golf" not in night.sections or not any(
        golf_policy(e) is not None and e.template("golf") is None for e in night.entrants
    ):
        return night
    night_dir = (Path(replays_root) / night.name).resolve()
    night_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(night_dir, 0o700)  # as the night runner keeps it: no bot uid may enter
    replays = night_dir / TRANSCRIPTS_DIR / GOLF_DIR  # live replays; transcripts in its llm/
    entrants = []
    seats = LLMSeats()
    try:
        for e in night.entrants:
            policy = golf_policy(e)
            if policy is None or e.template("golf") is not None:
                entrants.append(e)
                continue
            base = replays / e.name
            for course in night.sections["golf"].courses:
                if not (base / course / COMPLETE).is_file():
                    report(f"golf: {e.name} plays the {course} course live")
                    asyncio.run(_play_course(night, e.name, policy, course, base / course,
                                             replays, seats))
            entrants.append(replace(e, submissions={**e.submissions,
                                                    "golf": f"{base}/{{course}}/"}))
    finally:
        seats.close()
    return replace(night, entrants=tuple(entrants))
