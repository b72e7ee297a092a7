"""Running a night: schedule, skip what is done, play the rest, publish the standings.

The night's folder is the whole truth: a manifest (who was entered), the signed
plan (what is scheduled, written before the first match: `planfile`), one replay
per played match and a marker per void match. Running
the same night again reads that folder, keeps every finished replay that matches
its job and plays only the rest, so an interrupted night resumes where it
stopped. Void matches are played again on the next run. After the matches come
the night's games scored from files (`scoring`), resumable the same way; they
run on this machine whatever the executor.
"""

from __future__ import annotations

import asyncio
import os
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import msgspec
import structlog

from cogolf.agents.runs import AgentRunner
from cogolf.deck import Deck
from cogolf.fallback_notes import FallbackNotes
from cogolf.league.adaptive import batch_pairings, next_jobs
from cogolf.league.executors import Attempt, Outcome, run_jobs
from cogolf.league.host import NightHost
from cogolf.league.jobs import MatchJob
from cogolf.league.night import AGENT_GAMES, Night
from cogolf.league.plan import NightPlan, night_plan
from cogolf.league.planfile import Plan, plan_for, screening_plan, settle_plan
from cogolf.league.progress import Progress
from cogolf.league.progress_file import write_progress
from cogolf.league.proof import Checks, night_key, remember_played
from cogolf.league.publish import default_standings_path, standings_for_dir, write_standings
from cogolf.league.records import (
    MANIFEST_NAME,
    VOID_SUFFIX,
    Manifest,
    ManifestEntrant,
    ManifestSolo,
    VoidMarker,
)
from cogolf.league.resume import verified_results
from cogolf.league.schedule import schedule
from cogolf.league.scoring import JobsRun, score_jobs
from cogolf.league.sections import night_games
from cogolf.league.standings import DEFAULT_ANCHOR
from cogolf.llm.transcript import TRANSCRIPTS_DIR

log = structlog.get_logger("cogolf.league")


@dataclass(frozen=True)
class RunOptions:
    replays_root: Path = Path("replays")
    league_root: Path = Path("league")
    sandbox: str = "fork"
    accept_weak_sandbox: bool = False
    parallel: int | None = None  # overrides the night file's
    verify: bool = True  # re-resolve finished replays before keeping them
    pooled: bool = True  # policy entrants play from one bot process each (`league.host`)


@dataclass
class NightRun:
    jobs: list[MatchJob]
    skipped: list[str]
    outcomes: dict[str, Outcome]
    standings: dict[str, Any]
    standings_path: Path
    replays_dir: Path
    void: list[str] = field(default_factory=list)
    solo: JobsRun = field(default_factory=JobsRun)
    plan: Plan | None = None  # the night's signed schedule (`planfile`)
    plan_added: int = 0  # matches this run added to it (all of them on a first run)


def anchor_for(night: Night) -> str:
    """The first entrant that plays the literalist baseline is the rating anchor."""
    for e in night.entrants:
        if e.policy == "literalist":
            return e.name
    return DEFAULT_ANCHOR


def manifest_for(night: Night, jobs: list[MatchJob], plan: NightPlan | None = None) -> Manifest:
    solo = None
    if plan is not None and plan.games:
        solo = ManifestSolo.of({n: (list(p.items), p.attempts) for n, p in plan.games.items()})
    return Manifest(
        name=night.name,
        seed=night.seed,
        anchor=anchor_for(night),
        entrants=[
            ManifestEntrant(
                name=e.name,
                kind="policy" if e.policy is not None else "command" if e.plays_cogolf
                else "agent",
                solo=[g for g in night_games() if e.template(g) is not None
                      or (e.agent is not None and g in AGENT_GAMES)],
            )
            for e in night.entrants
        ],
        matches=sorted(j.match_id for j in jobs),
        solo=solo,
    )


def _write_json(path: Path, value: msgspec.Struct) -> None:
    tmp = path.with_name(f".{path.name}.tmp")
    tmp.write_bytes(msgspec.json.format(msgspec.json.encode(value), indent=2) + b"\n")
    tmp.replace(path)


def void_marker_path(replays_dir: Path, match_id: str) -> Path:
    return replays_dir / f"{match_id}{VOID_SUFFIX}"


async def run_night(
    night: Night,
    deck: Deck,
    options: RunOptions,
    progress_stream: TextIO,
    *,
    attempt: Attempt | None = None,
    in_flight: int | None = None,
    agents: AgentRunner | None = None,
) -> NightRun:
    """Play every match of `night` not already done. `attempt` picks the executor
    (default: this machine, one server and pooled bots for the night, `league.host`);
    `in_flight` bounds attempts at once (default: the night's `parallel`; Ray passes a
    larger bound and lets its own scheduler place tasks on free CPUs); `agents` runs
    the agents' attempts (default: this machine; Ray passes its workers')."""
    jobs = schedule(
        night,
        deck.digest,
        sandbox=options.sandbox,
        accept_weak_sandbox=options.accept_weak_sandbox,
    )
    plan = night_plan(night)
    replays_dir = options.replays_root / night.name
    replays_dir.mkdir(parents=True, exist_ok=True)
    os.chmod(replays_dir, 0o700)  # the night's files and key: no bot uid may enter
    key = night_key(replays_dir, create=True)
    assert key is not None
    full = jobs
    if night.schedule == "adaptive":
        # The matches chosen so far are the plan's (none on a first run): `adaptive`.
        stored = screening_plan(replays_dir, key)[0]
        planned = {p.match_id for p in stored.matches} if stored is not None else set()
        jobs = [j for j in full if j.match_id in planned]
    # Before any match: the schedule every replay will be held to (PlanError if it changed).
    matches_plan, added = settle_plan(replays_dir, key, plan_for(night.name, jobs, deck.name))
    _write_json(replays_dir / MANIFEST_NAME, manifest_for(night, jobs, plan))

    parallel = in_flight or options.parallel or night.parallel
    total = night.budget if night.schedule == "adaptive" and night.budget else len(jobs)
    progress = Progress(total, progress_stream, logs_root=replays_dir)
    done_before = await verified_results(
        jobs,
        replays_dir,
        deck,
        sandbox_mode=options.sandbox,
        accept_weak_sandbox=options.accept_weak_sandbox,
        parallel=options.parallel or night.parallel,
        verify=options.verify,
    )
    todo: list[MatchJob] = []
    skipped: list[str] = []
    for job in jobs:
        result = done_before.get(job.match_id)
        if result is not None:
            skipped.append(job.match_id)
            progress.skipped(result)
        else:
            todo.append(job)
    log.info("night_start", night=night.name, matches=len(jobs), resumed=len(skipped))
    progress.start()
    voided = 0
    write_progress(replays_dir, night.name, progress, "matches", voided)

    notes = FallbackNotes(replays_dir / TRANSCRIPTS_DIR)

    def done(outcome: Outcome) -> None:
        nonlocal voided
        progress.finished(outcome.match_id, outcome.result, outcome.void_cause)
        if outcome.result is not None and any(outcome.result.fallbacks):
            # Each entrant's first fallback (per cause) is told with the match it was in.
            for line in notes.read(replays_dir / outcome.job.replay_name):
                progress.say(f"  {outcome.match_id}: {line}")
        voided += outcome.void_cause is not None
        write_progress(replays_dir, night.name, progress, "matches", voided)
        marker = void_marker_path(replays_dir, outcome.match_id)
        if outcome.void_cause is not None:
            _write_json(
                marker,
                VoidMarker(
                    match_id=outcome.match_id,
                    names=list(outcome.job.names),
                    cause=outcome.void_cause,
                    attempts=outcome.attempts,
                ),
            )
        else:
            marker.unlink(missing_ok=True)

    def started(job: MatchJob) -> None:
        progress.started_match(job.match_id)
        write_progress(replays_dir, night.name, progress, "matches", voided)

    async def play(attempt: Attempt) -> dict[str, Outcome]:
        nonlocal matches_plan, added
        outcomes = await run_jobs(todo, replays_dir, attempt=attempt, parallel=parallel,
                                  on_done=done, on_retry=progress.retried, on_start=started)
        if night.schedule != "adaptive" or not night.budget:
            return outcomes
        results = {mid: r for mid, r in done_before.items()}
        results.update({mid: o.result for mid, o in outcomes.items() if o.result is not None})
        while True:
            batch = next_jobs(full, jobs, results, room=night.budget - len(jobs),
                              pairings=batch_pairings(parallel))
            if not batch:
                return outcomes
            jobs.extend(batch)
            # Signed before it is played: only a chosen match's replay counts.
            matches_plan, more = settle_plan(
                replays_dir, key, plan_for(night.name, jobs, deck.name)
            )
            added += more
            _write_json(replays_dir / MANIFEST_NAME, manifest_for(night, jobs, plan))
            played = await run_jobs(batch, replays_dir, attempt=attempt, parallel=parallel,
                                    on_done=done, on_retry=progress.retried, on_start=started)
            outcomes.update(played)
            results.update({mid: o.result for mid, o in played.items() if o.result is not None})

    if attempt is None:
        async with NightHost(replays_dir, sandbox=options.sandbox,
                             accept_weak_sandbox=options.accept_weak_sandbox,
                             pooled=options.pooled) as host:
            outcomes = await play(host.play)
    else:
        outcomes = await play(attempt)
    # What this runner played, or re-verified, is proved: the standings need not re-resolve it.
    proved = [o.job.replay_name for o in outcomes.values() if o.result is not None]
    if options.verify:
        proved += [f"{mid}.ndjson" for mid in skipped]
    remember_played(key, replays_dir, proved)

    def report(line: str) -> None:
        progress_stream.write(line + "\n")
        progress_stream.flush()

    def solo_done(done: int, total: int) -> None:
        progress.solo = (done, total)
        write_progress(replays_dir, night.name, progress, "solo", voided)

    write_progress(replays_dir, night.name, progress, "solo", voided)
    solo = await score_jobs(
        night, plan, replays_dir, parallel=options.parallel or night.parallel, report=report,
        key=key, on_progress=solo_done, agents=agents,
    )
    checks = Checks(deck, options.sandbox, options.accept_weak_sandbox,
                    options.parallel or night.parallel)
    doc = await asyncio.to_thread(standings_for_dir, replays_dir, None, checks=checks)
    path = write_standings(doc, default_standings_path(options.league_root, night.name),
                           night_dir=replays_dir)
    write_progress(replays_dir, night.name, progress, "finished", voided)
    void = sorted(mid for mid, o in outcomes.items() if o.void_cause is not None)
    log.info("night_end", night=night.name, played=len(outcomes) - len(void), void=len(void),
             solo_played=len(solo.played), solo_void=len(solo.void))
    return NightRun(jobs, skipped, outcomes, doc, path, replays_dir, void, solo,
                    matches_plan, added)
