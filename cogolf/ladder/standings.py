"""The ladder's standings and a bot's page, as plain documents read from the database.

The table's ratings are the night's Bradley–Terry fit with its profile-likelihood
intervals (`cogolf.league.ratings.rate`), over every counted match, relative to the
mean of the rated bots (1000): the same numbers a night would give for the same
matches, and the same on every server reading one database (the matches are read
in the order their results were counted). The rating history of a bot's page is
what was known after each of its matches (the fit then, with its Laplace interval),
kept as it was written.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from typing import Any

import sqlalchemy as sa

from cogolf.ladder import schema as t
from cogolf.ladder.store import STALE_SECONDS, Store
from cogolf.league.ratings import MIN_MATCHES, Game, rate

RECENT = 50  # matches listed on a bot's page


def _status(bot: Any, present: set[int], busy: set[int]) -> str:
    if bot.status == "retired":
        return "retired"
    if bot.paused_at is not None:
        return "paused"
    if bot.id in busy:
        return "playing"
    return "ready" if bot.id in present else "away"


def _statuses(c: sa.Connection, bots: Sequence[Any]) -> dict[int, str]:
    now = time.time()
    present = set(
        c.execute(
            sa.select(t.presence.c.bot_id).where(t.presence.c.seen > now - STALE_SECONDS)
        ).scalars()
    )
    busy: set[int] = set()
    for a, b in c.execute(
        sa.select(t.matches.c.seat0_id, t.matches.c.seat1_id).where(
            t.matches.c.status.in_(("assigned", "playing"))
        )
    ):
        busy |= {a, b}
    return {bot.id: _status(bot, present, busy) for bot in bots}


def live_statuses(store: Store, doc: dict[str, Any]) -> dict[str, Any]:
    """`doc` with every bot's status as it is now: a table is recomputed only after a new
    result, but bots come, go, and lose their matches (voided) between results."""
    with store.reading() as c:
        bots = {bot.name: bot for bot in c.execute(sa.select(t.bots)).all()}
        status = _statuses(c, list(bots.values()))
    rows = [
        {**r, "status": status[bots[r["name"]].id], "last_seen": bots[r["name"]].last_seen}
        if r["name"] in bots
        else r
        for r in doc["bots"]
    ]
    return {**doc, "bots": rows}


def standings(store: Store) -> dict[str, Any]:
    with store.reading() as c:
        seq = int(c.execute(sa.select(t.state.c.seq)).scalar_one())
        bots = c.execute(sa.select(t.bots).order_by(t.bots.c.id)).all()
        status = _statuses(c, bots)
        counted = c.execute(
            sa.select(
                t.matches.c.seat0_id, t.matches.c.seat1_id, t.matches.c.score0, t.matches.c.score1
            )
            .where(t.matches.c.seq.is_not(None), t.matches.c.seq <= seq)
            .order_by(t.matches.c.seq)
        ).all()
    record: dict[int, list[int]] = {b.id: [0, 0, 0] for b in bots}  # wins, draws, losses
    for a, b, s0, s1 in counted:
        if s0 == s1:
            record[a][1] += 1
            record[b][1] += 1
        else:
            winner, loser = (a, b) if s0 > s1 else (b, a)
            record[winner][0] += 1
            record[loser][2] += 1
    rated = [b.id for b in bots if sum(record[b.id])]
    index = {bot: k for k, bot in enumerate(rated)}
    games = [Game(index[a], index[b], s0 - s1) for a, b, s0, s1 in counted]
    fitted = dict(zip(rated, rate(len(rated), games, None), strict=True)) if rated else {}
    rows = []
    for bot in bots:
        w, d, losses = record[bot.id]
        r = fitted.get(bot.id)
        rows.append(
            {
                "name": bot.name,
                "owner": bot.owner,
                "status": status[bot.id],
                "rating": None if r is None else round(r.rating, 1),
                "low": None if r is None else round(r.low, 1),
                "high": None if r is None else round(r.high, 1),
                "too_few_matches": w + d + losses < MIN_MATCHES,
                "games": w + d + losses,
                "wins": w,
                "draws": d,
                "losses": losses,
                "last_seen": bot.last_seen,
                "paused_reason": bot.paused_reason,
            }
        )
    rows.sort(key=lambda r: (r["rating"] is None, -(r["rating"] or 0.0), r["name"]))
    for rank, row in enumerate(rows, start=1):
        row["rank"] = rank if row["rating"] is not None else None
    return {"results": seq, "bots": rows}


def bot_page_data(store: Store, name: str, table: dict[str, Any]) -> dict[str, Any] | None:
    """A bot's row of `table`, its rating history, recent matches, head-to-head, pauses."""
    row = next((r for r in table["bots"] if r["name"] == name), None)
    if row is None:
        return None
    with store.reading() as c:
        bot = c.execute(sa.select(t.bots).where(t.bots.c.name == name)).first()
        if bot is None:
            return None
        names = dict(c.execute(sa.select(t.bots.c.id, t.bots.c.name)).all())
        history = c.execute(
            sa.select(
                t.ratings.c.seq,
                t.ratings.c.match_id,
                t.ratings.c.rating,
                t.ratings.c.low,
                t.ratings.c.high,
                t.ratings.c.at,
            )
            .where(t.ratings.c.bot_id == bot.id, t.ratings.c.seq <= table["results"])
            .order_by(t.ratings.c.seq)
        ).all()
        m = t.matches.c
        mine = sa.or_(m.seat0_id == bot.id, m.seat1_id == bot.id)
        recent = c.execute(
            sa.select(t.matches)
            .where(mine, m.status != "pending")
            .order_by(m.created_at.desc(), m.id.desc())
            .limit(RECENT)
        ).all()
        counted = c.execute(
            sa.select(m.seat0_id, m.seat1_id, m.score0, m.score1).where(
                mine, m.seq.is_not(None), m.seq <= table["results"]
            )
        ).all()
        pauses = c.execute(
            sa.select(t.pauses.c.at, t.pauses.c.reason, t.pauses.c.lifted_at)
            .where(t.pauses.c.bot_id == bot.id)
            .order_by(t.pauses.c.at.desc())
        ).all()
    heads: dict[str, dict[str, int]] = {}
    for a, b, s0, s1 in counted:
        mine_score, theirs, other = (s0, s1, b) if a == bot.id else (s1, s0, a)
        h = heads.setdefault(names[other], {"wins": 0, "draws": 0, "losses": 0, "margin": 0})
        h["margin"] += mine_score - theirs
        key = "draws" if mine_score == theirs else "wins" if mine_score > theirs else "losses"
        h[key] += 1
    matches = []
    for r in recent:
        slot = 0 if r.seat0_id == bot.id else 1
        other = r.seat1_id if slot == 0 else r.seat0_id
        scores = None if r.score0 is None else [r.score0, r.score1]
        matches.append(
            {
                "match_id": r.id,
                "opponent": names[other],
                "slot": slot,
                "status": r.status,
                "scores": scores,
                "reason": r.reason,
                "url": f"{r.host_url}/matches/{r.id}" if r.host_url else None,
                "at": r.finished_at or r.started_at or r.created_at,
            }
        )
    return {
        **row,
        "history": [
            {
                "results": h.seq,
                "match_id": h.match_id,
                "rating": round(h.rating, 1),
                "low": round(h.low, 1),
                "high": round(h.high, 1),
                "at": h.at,
            }
            for h in history
        ],
        "matches": matches,
        "head_to_head": [{"opponent": k, **v} for k, v in sorted(heads.items())],
        "pauses": [{"at": p.at, "reason": p.reason, "lifted_at": p.lifted_at} for p in pauses],
    }
