"""The ladder's state in its database: bots and keys, who is connected, matches, results.

Every change is one transaction, so a server killed at any moment leaves either the
whole change or none of it. Several servers share one database: each claims the
pairs it will host in a transaction that first locks the connected bots' presence
rows (`FOR UPDATE SKIP LOCKED` on PostgreSQL; SQLite's single writer), then counts
their matches, so no bot is given more matches than it asked for and no match is
hosted twice. A result is written holding the lock of the one `state` row, which
numbers the results without gaps (`matches.seq`) and orders the ratings history.

A server that stops answering (its `servers` heartbeat older than the orphan time)
leaves its matches `assigned`/`playing` under its name, and their bots unpairable: a
live server voids them, holding the dead server's row and the matches' rows locked,
so two live servers never both void one match, and a late result of the dead server
finds the match no longer its to write.
"""

from __future__ import annotations

import contextlib
import secrets
import threading
import time
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass

import sqlalchemy as sa

from cogolf.ladder import schema as t
from cogolf.ladder.keys import is_key, key_hash, name_problem, new_key
from cogolf.league.pairing import Belief, Candidate, belief, pick
from cogolf.league.ratings import ANCHOR_RATING, ELO_SCALE, Game

MAX_CONCURRENT = 16  # matches one bot may play at once
MAX_OWNER_CHARS = 64
STALE_SECONDS = 15.0  # a presence not refreshed for this long is a server that died
# A server silent for this long is gone for good: its unfinished matches are voided. Well
# past STALE_SECONDS, so a server restarting (or a database hiccup) resumes its matches.
ORPHAN_SECONDS = 4 * STALE_SECONDS
PAUSE_AFTER = 3  # bad matches in a row (a seat missed, or mostly played by the fallback)
PAUSE_SECONDS = 600.0  # a pause then lifts by itself, the bot on probation
SEED_BITS = 63
Z95 = 1.959963984540054
HISTORY = 2000  # pairings looked at for repeats and the farming cap


class LadderError(ValueError):
    """A refused request: `status` is the HTTP status it answers with."""

    def __init__(self, status: int, message: str) -> None:
        super().__init__(message)
        self.status = status


@dataclass(frozen=True)
class Bot:
    id: int
    name: str


@dataclass(frozen=True)
class Claimed:
    """A match this server is to host now."""

    match_id: str
    seat_ids: tuple[int, int]
    names: tuple[str, str]
    seed: int
    tokens: tuple[str, str]
    status: str = "assigned"


@dataclass(frozen=True)
class Seat:
    """A seat to hand to a connected bot."""

    match_id: str
    slot: int
    bot_id: int
    host_url: str
    token: str

    @property
    def url(self) -> str:
        root = "ws" + self.host_url[4:] if self.host_url.startswith("http") else self.host_url
        return f"{root}/matches/{self.match_id}/player?slot={self.slot}&token={self.token}"


@dataclass(frozen=True)
class Outcome:
    """What a finished match says about its two seats."""

    scores: tuple[int, int]
    fallbacks: tuple[int, int]
    holes: int
    reason: str
    absent: tuple[bool, bool]  # a seat that never connected
    causes: tuple[dict[str, int], dict[str, int]] = ({}, {})


def _now() -> float:
    return time.time()


def _causes(causes: dict[str, int]) -> str:
    return ", ".join(f"{k} ×{v}" for k, v in sorted(causes.items())) or "none"


class Store:
    def __init__(self, engine: sa.Engine) -> None:
        self.engine = engine
        self._belief: tuple[int, tuple[int, ...], Belief] | None = None
        # One writer at a time in this process: SQLite would make the others poll for its
        # lock with sleeps of up to 100 ms (other processes still wait for it that way).
        self._writer = threading.Lock()

    @contextlib.contextmanager
    def _write(self) -> Iterator[sa.Connection]:
        with self._writer, self.engine.begin() as c:
            yield c

    def reading(self) -> sa.Connection:
        return self.engine.connect().execution_options(read_only=True)

    # ------------------------------------------------------------ bots and keys

    def add_bot(self, name: str, owner: str | None = None) -> str:
        """Register a bot; returns its key (shown once: only the hash is kept)."""
        problem = name_problem(name)
        if problem:
            raise LadderError(400, problem)
        if owner is not None and not 0 < len(owner) <= MAX_OWNER_CHARS:
            raise LadderError(400, f"owner: 1 to {MAX_OWNER_CHARS} characters")
        key = new_key()
        with self._write() as c:
            if c.execute(sa.select(t.bots.c.id).where(t.bots.c.name == name)).first():
                raise LadderError(409, f"a bot named {name!r} exists (retired bots keep names)")
            bot_id = c.execute(
                t.bots.insert().values(
                    name=name,
                    owner=owner,
                    status="active",
                    created_at=_now(),
                    good_streak=0,
                    bad_streak=0,
                )
            ).inserted_primary_key[0]
            c.execute(t.keys.insert().values(bot_id=bot_id, hash=key_hash(key), created_at=_now()))
        return key

    def _bot_id(self, c: sa.Connection, name: str) -> int:
        row = c.execute(sa.select(t.bots.c.id, t.bots.c.status).where(t.bots.c.name == name))
        found = row.first()
        if found is None:
            raise LadderError(404, f"no bot named {name[:80]!r}")
        return int(found.id)

    def rotate(self, name: str) -> str:
        """A new key for the bot; every earlier key is revoked at once."""
        key = new_key()
        with self._write() as c:
            bot_id = self._bot_id(c, name)
            c.execute(
                t.keys.update()
                .where(t.keys.c.bot_id == bot_id, t.keys.c.revoked_at.is_(None))
                .values(revoked_at=_now())
            )
            c.execute(t.keys.insert().values(bot_id=bot_id, hash=key_hash(key), created_at=_now()))
        return key

    def retire(self, name: str) -> None:
        """The bot plays no more (its keys are revoked); its history stays."""
        with self._write() as c:
            bot_id = self._bot_id(c, name)
            c.execute(
                t.bots.update()
                .where(t.bots.c.id == bot_id)
                .values(status="retired", retired_at=_now())
            )
            c.execute(
                t.keys.update()
                .where(t.keys.c.bot_id == bot_id, t.keys.c.revoked_at.is_(None))
                .values(revoked_at=_now())
            )
            c.execute(t.presence.delete().where(t.presence.c.bot_id == bot_id))
            self._void_pending(c, bot_id, "a bot of this pairing retired")

    def unpause(self, name: str) -> None:
        with self._write() as c:
            self._lift(c, self._bot_id(c, name), _now())

    def _lift(self, c: sa.Connection, bot_id: int, now: float) -> None:
        c.execute(
            t.bots.update()
            .where(t.bots.c.id == bot_id)
            .values(paused_at=None, paused_reason=None, bad_streak=PAUSE_AFTER - 1, good_streak=0)
        )
        c.execute(
            t.pauses.update()
            .where(t.pauses.c.bot_id == bot_id, t.pauses.c.lifted_at.is_(None))
            .values(lifted_at=now)
        )

    def _void_pending(self, c: sa.Connection, bot_id: int, reason: str) -> None:
        c.execute(
            t.matches.update()
            .where(
                t.matches.c.status == "pending",
                sa.or_(t.matches.c.seat0_id == bot_id, t.matches.c.seat1_id == bot_id),
            )
            .values(status="void", reason=reason, finished_at=_now())
        )

    def authenticate(self, key: str) -> Bot:
        """The bot a key belongs to; LadderError(401) for a wrong, revoked or retired key."""
        if not is_key(key):
            raise LadderError(401, "not a ladder key (cgk_ and 43 characters)")
        with self.reading() as c:
            row = c.execute(
                sa.select(t.bots.c.id, t.bots.c.name, t.bots.c.status, t.keys.c.revoked_at)
                .join(t.keys, t.keys.c.bot_id == t.bots.c.id)
                .where(t.keys.c.hash == key_hash(key))
            ).first()
        if row is None:
            raise LadderError(401, "unknown key")
        if row.status != "active":
            raise LadderError(401, f"bot {row.name!r} is retired")
        if row.revoked_at is not None:
            raise LadderError(401, "this key was revoked (the bot's key was rotated)")
        return Bot(int(row.id), str(row.name))

    # ------------------------------------------------------------ presence

    def join(self, bot: Bot, server: str, concurrent: int) -> None:
        now = _now()
        with self._write() as c:
            old = c.execute(
                sa.select(t.presence).where(t.presence.c.bot_id == bot.id).with_for_update()
            ).first()
            if old is not None and old.seen > now - STALE_SECONDS:
                raise LadderError(409, f"bot {bot.name!r} is already connected to the ladder")
            if old is not None:
                c.execute(t.presence.delete().where(t.presence.c.bot_id == bot.id))
            c.execute(
                t.presence.insert().values(
                    bot_id=bot.id, server=server, concurrent=concurrent, since=now, seen=now
                )
            )
            c.execute(t.bots.update().where(t.bots.c.id == bot.id).values(last_seen=now))

    def leave(self, bot: Bot, server: str) -> None:
        with self._write() as c:
            c.execute(
                t.presence.delete().where(
                    t.presence.c.bot_id == bot.id, t.presence.c.server == server
                )
            )
            c.execute(t.bots.update().where(t.bots.c.id == bot.id).values(last_seen=_now()))

    def heartbeat(self, server: str, url: str, bot_ids: Iterable[int]) -> None:
        now = _now()
        ids = list(bot_ids)
        with self._write() as c:
            updated = c.execute(
                t.servers.update().where(t.servers.c.name == server).values(url=url, seen=now)
            )
            if updated.rowcount == 0:
                c.execute(t.servers.insert().values(name=server, url=url, seen=now))
            if ids:
                c.execute(
                    t.presence.update()
                    .where(t.presence.c.bot_id.in_(ids), t.presence.c.server == server)
                    .values(seen=now)
                )
                c.execute(t.bots.update().where(t.bots.c.id.in_(ids)).values(last_seen=now))

    def forget_server(self, server: str) -> None:
        """A server going down: its bots are away (their matches keep their rows)."""
        with self._write() as c:
            c.execute(t.presence.delete().where(t.presence.c.server == server))

    def void_orphans(self, server: str, orphan: float) -> list[str]:
        """Void the unfinished matches of every other server silent for `orphan` seconds
        (and drop its presence rows: those bots are not connected to it). Returns their ids.
        Rows another transaction holds (a server writing a result, another live server
        voiding) are skipped: that one decides them."""
        now = _now()
        with self._write() as c:
            dead = {
                str(r.name): float(r.seen)
                for r in c.execute(
                    sa.select(t.servers.c.name, t.servers.c.seen)
                    .where(t.servers.c.name != server, t.servers.c.seen < now - orphan)
                    .with_for_update(skip_locked=True)
                )
            }
            if not dead:
                return []
            m = t.matches.c
            rows = c.execute(
                sa.select(m.id, m.server)
                .where(m.server.in_(list(dead)), m.status.in_(("assigned", "playing")))
                .order_by(m.id)
                .with_for_update(skip_locked=True)
            ).all()
            voided = []
            for r in rows:
                since = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(dead[r.server]))
                reason = (
                    f"its server {r.server} stopped answering: no heartbeat since {since} "
                    f"(a server silent for {orphan:g} s is gone)"
                )
                done = c.execute(
                    t.matches.update()
                    .where(m.id == r.id, m.status.in_(("assigned", "playing")))
                    .values(status="void", reason=reason, finished_at=now, token0=None, token1=None)
                )
                if done.rowcount == 1:
                    voided.append(str(r.id))
            c.execute(t.presence.delete().where(t.presence.c.server.in_(list(dead))))
        return voided

    # ------------------------------------------------------------ matchmaking

    def _games(self, c: sa.Connection) -> tuple[int, list[tuple[int, int, int]]]:
        seq = int(c.execute(sa.select(t.state.c.seq).where(t.state.c.id == 1)).scalar_one())
        rows = c.execute(
            sa.select(
                t.matches.c.seat0_id, t.matches.c.seat1_id, t.matches.c.score0, t.matches.c.score1
            )
            .where(t.matches.c.seq.is_not(None))
            .order_by(t.matches.c.seq)
        )
        return seq, [(int(a), int(b), int(s0) - int(s1)) for a, b, s0, s1 in rows]

    def belief(self, c: sa.Connection) -> tuple[tuple[int, ...], Belief]:
        """Every bot's strength as fitted so far (cached until the next result)."""
        seq, games = self._games(c)
        ids = tuple(
            int(i) for i in c.execute(sa.select(t.bots.c.id).order_by(t.bots.c.id)).scalars()
        )
        cached = self._belief
        if cached is not None and cached[0] == seq and cached[1] == ids:
            return ids, cached[2]
        index = {bot: k for k, bot in enumerate(ids)}
        start = None
        if cached is not None and cached[1] == ids[: len(cached[1])]:
            start = cached[2].theta
        b = belief(len(ids), [Game(index[a], index[bb], m) for a, bb, m in games], start)
        self._belief = (seq, ids, b)
        return ids, b

    def claim(self, server: str, host_url: str, *, most: int = 8) -> list[Claimed]:
        """Pick and claim the matches this server hosts now (see the module docstring)."""
        now = _now()
        with self._write() as c:
            self._lift_expired(c, now)
            ready = c.execute(
                sa.select(
                    t.presence.c.bot_id,
                    t.presence.c.concurrent,
                    t.bots.c.owner,
                    t.bots.c.good_streak,
                    t.bots.c.name,
                )
                .join(t.bots, t.bots.c.id == t.presence.c.bot_id)
                .where(
                    t.presence.c.seen > now - STALE_SECONDS,
                    t.bots.c.status == "active",
                    t.bots.c.paused_at.is_(None),
                )
                .order_by(t.presence.c.bot_id)
                .with_for_update(of=t.presence, skip_locked=True)
            ).all()
            if len(ready) < 2:
                return []
            load: dict[int, int] = {}
            for a, b in c.execute(
                sa.select(t.matches.c.seat0_id, t.matches.c.seat1_id).where(
                    t.matches.c.status.in_(("assigned", "playing"))
                )
            ):
                load[a] = load.get(a, 0) + 1
                load[b] = load.get(b, 0) + 1
            # A bot on probation (new, or back from a pause) plays one match at a time
            # until it has shown it plays the matches it is given.
            free = {
                r.bot_id: min(r.concurrent, 1 + r.good_streak) - load.get(r.bot_id, 0)
                for r in ready
            }
            names = {r.bot_id: r.name for r in ready}
            claimed = self._host_pending(c, server, host_url, free, names, now)
            pending: dict[int, int] = {}
            for a, b in c.execute(
                sa.select(t.matches.c.seat0_id, t.matches.c.seat1_id).where(
                    t.matches.c.status == "pending"
                )
            ):
                pending[a] = pending.get(a, 0) + 1
                pending[b] = pending.get(b, 0) + 1
            ids, b = self.belief(c)
            index = {bot: k for k, bot in enumerate(ids)}
            history = [
                (index[x], index[y])
                for x, y in reversed(
                    c.execute(
                        sa.select(t.pairings.c.a_id, t.pairings.c.b_id)
                        .order_by(t.pairings.c.id.desc())
                        .limit(HISTORY)
                    ).all()
                )
            ]
            candidates = [
                Candidate(index[r.bot_id], free[r.bot_id] - pending.get(r.bot_id, 0), r.owner)
                for r in ready
                if free[r.bot_id] - pending.get(r.bot_id, 0) > 0
            ]
            for i, j in pick(b, candidates, history, most=most):
                a_id, b_id = ids[i], ids[j]
                seed = secrets.randbits(SEED_BITS)
                pairing = c.execute(
                    t.pairings.insert().values(a_id=a_id, b_id=b_id, seed=seed, created_at=now)
                ).inserted_primary_key[0]
                for leg, (s0, s1) in enumerate(((a_id, b_id), (b_id, a_id))):
                    c.execute(
                        t.matches.insert().values(
                            id=f"ladder-{pairing}-{leg}",
                            pairing_id=pairing,
                            leg=leg,
                            seat0_id=s0,
                            seat1_id=s1,
                            seed=seed,
                            status="pending",
                            delivered0=False,
                            delivered1=False,
                            created_at=now,
                        )
                    )
            claimed += self._host_pending(c, server, host_url, free, names, now)
        return claimed

    def _host_pending(
        self,
        c: sa.Connection,
        server: str,
        host_url: str,
        free: dict[int, int],
        names: dict[int, str],
        now: float,
    ) -> list[Claimed]:
        out = []
        legs = c.execute(
            sa.select(t.matches.c.id, t.matches.c.seat0_id, t.matches.c.seat1_id, t.matches.c.seed)
            .where(t.matches.c.status == "pending")
            .order_by(t.matches.c.pairing_id, t.matches.c.leg)
        ).all()
        for leg in legs:
            a, b = leg.seat0_id, leg.seat1_id
            if free.get(a, 0) <= 0 or free.get(b, 0) <= 0:
                continue
            tokens = (secrets.token_urlsafe(18), secrets.token_urlsafe(18))
            done = c.execute(
                t.matches.update()
                .where(t.matches.c.id == leg.id, t.matches.c.status == "pending")
                .values(
                    status="assigned",
                    server=server,
                    host_url=host_url,
                    token0=tokens[0],
                    token1=tokens[1],
                    started_at=now,
                )
            )
            if done.rowcount != 1:
                continue
            free[a] -= 1
            free[b] -= 1
            out.append(Claimed(leg.id, (a, b), (names[a], names[b]), int(leg.seed), tokens))
        return out

    def _lift_expired(self, c: sa.Connection, now: float) -> None:
        for bot_id in c.execute(
            sa.select(t.bots.c.id).where(
                t.bots.c.paused_at.is_not(None), t.bots.c.paused_at < now - PAUSE_SECONDS
            )
        ).scalars():
            self._lift(c, int(bot_id), now)

    # ------------------------------------------------------------ hosting

    def hosted(self, server: str) -> list[Claimed]:
        """This server's matches not yet over (to host again after a restart)."""
        with self.reading() as c:
            rows = c.execute(
                sa.select(t.matches).where(
                    t.matches.c.server == server, t.matches.c.status.in_(("assigned", "playing"))
                )
            ).all()
            names = dict(c.execute(sa.select(t.bots.c.id, t.bots.c.name)).all())
        return [
            Claimed(
                r.id,
                (r.seat0_id, r.seat1_id),
                (names[r.seat0_id], names[r.seat1_id]),
                int(r.seed),
                (r.token0, r.token1),
                r.status,
            )
            for r in rows
        ]

    def seq(self) -> int:
        with self.reading() as c:
            return int(c.execute(sa.select(t.state.c.seq)).scalar_one())

    def playing(self, match_id: str, server: str) -> None:
        with self._write() as c:
            c.execute(
                t.matches.update()
                .where(
                    t.matches.c.id == match_id,
                    t.matches.c.server == server,
                    t.matches.c.status == "assigned",
                )
                .values(status="playing")
            )

    def seats_for(self, bot_ids: Sequence[int]) -> list[Seat]:
        """Seats of playing matches not yet handed to these (connected) bots."""
        if not bot_ids:
            return []
        m = t.matches.c
        with self.reading() as c:
            rows = c.execute(
                sa.select(
                    m.id,
                    m.seat0_id,
                    m.seat1_id,
                    m.delivered0,
                    m.delivered1,
                    m.host_url,
                    m.token0,
                    m.token1,
                ).where(
                    m.status == "playing",
                    sa.or_(
                        sa.and_(m.seat0_id.in_(bot_ids), m.delivered0.is_(False)),
                        sa.and_(m.seat1_id.in_(bot_ids), m.delivered1.is_(False)),
                    ),
                )
            ).all()
        out = []
        for r in rows:
            for slot, (bot, delivered, token) in enumerate(
                ((r.seat0_id, r.delivered0, r.token0), (r.seat1_id, r.delivered1, r.token1))
            ):
                if bot in bot_ids and not delivered:
                    out.append(Seat(r.id, slot, bot, r.host_url, token))
        return out

    def delivered(self, seats: Sequence[Seat]) -> None:
        if not seats:
            return
        with self._write() as c:
            for seat in seats:
                column = "delivered0" if seat.slot == 0 else "delivered1"
                c.execute(
                    t.matches.update().where(t.matches.c.id == seat.match_id).values({column: True})
                )

    # ------------------------------------------------------------ results

    def void(self, match_id: str, server: str, reason: str) -> None:
        with self._write() as c:
            c.execute(
                t.matches.update()
                .where(
                    t.matches.c.id == match_id,
                    t.matches.c.server == server,
                    t.matches.c.status.in_(("assigned", "playing")),
                )
                .values(status="void", reason=reason, finished_at=_now(), token0=None, token1=None)
            )

    def record(self, match_id: str, server: str, out: Outcome) -> bool:
        """Write a finished match, its ratings and its seats' streaks in one transaction.
        False when it was not this server's match to write (already written, voided)."""
        now = _now()
        with self._write() as c:
            seq = int(
                c.execute(
                    sa.select(t.state.c.seq).where(t.state.c.id == 1).with_for_update()
                ).scalar_one()
            )
            row = c.execute(
                sa.select(t.matches).where(t.matches.c.id == match_id).with_for_update()
            ).first()
            if row is None or row.server != server or row.status not in ("assigned", "playing"):
                return False
            seats = (int(row.seat0_id), int(row.seat1_id))
            counted = not any(out.absent) and out.reason != "harness_fault"
            values: dict[str, object] = dict(
                finished_at=now,
                score0=out.scores[0],
                score1=out.scores[1],
                fallbacks0=out.fallbacks[0],
                fallbacks1=out.fallbacks[1],
                reason=out.reason,
                token0=None,
                token1=None,
            )
            if counted:
                values.update(status="finished", seq=seq + 1)
                c.execute(t.state.update().where(t.state.c.id == 1).values(seq=seq + 1))
            else:
                absent = [
                    n for n, gone in zip(("seat 0", "seat 1"), out.absent, strict=True) if gone
                ]
                why = f"{' and '.join(absent)} never connected" if absent else out.reason
                values.update(status="void", reason=why)
            c.execute(t.matches.update().where(t.matches.c.id == match_id).values(values))
            if out.reason != "harness_fault":
                for slot, bot_id in enumerate(seats):
                    self._streak(c, bot_id, slot, match_id, out, now)
            if counted:
                self._rate(c, match_id, seats, seq + 1, now)
        return True

    def _streak(
        self, c: sa.Connection, bot_id: int, slot: int, match_id: str, out: Outcome, now: float
    ) -> None:
        if out.absent[slot]:
            bad = f"missed its seat in {match_id}"
        elif out.holes and 2 * out.fallbacks[slot] > out.holes:
            bad = (
                f"the fallback played {out.fallbacks[slot]} of {out.holes} holes of {match_id} "
                f"({_causes(out.causes[slot])})"
            )
        else:
            bad = ""
        bot = c.execute(sa.select(t.bots).where(t.bots.c.id == bot_id)).one()
        if not bad:
            c.execute(
                t.bots.update()
                .where(t.bots.c.id == bot_id)
                .values(good_streak=bot.good_streak + 1, bad_streak=0)
            )
            return
        streak = bot.bad_streak + 1
        values: dict[str, object] = dict(bad_streak=streak, good_streak=0)
        if streak >= PAUSE_AFTER and bot.paused_at is None:
            reason = f"{streak} bad matches in a row; the last {bad}"
            values.update(paused_at=now, paused_reason=reason)
            c.execute(t.pauses.insert().values(bot_id=bot_id, at=now, reason=reason))
        c.execute(t.bots.update().where(t.bots.c.id == bot_id).values(values))

    def _rate(
        self, c: sa.Connection, match_id: str, seats: tuple[int, int], seq: int, now: float
    ) -> None:
        """The two seats' ratings after this result (fit and Laplace interval, relative to
        the mean of every bot), kept as their history."""
        ids, b = self.belief(c)
        n = len(ids)
        for bot_id in seats:
            i = ids.index(bot_id)
            cvec = [(k == i) - 1.0 / n for k in range(n)]
            centre = sum(x * th for x, th in zip(cvec, b.theta, strict=True))
            var = sum(cvec[p] * b.cov[p][q] * cvec[q] for p in range(n) for q in range(n))
            spread = Z95 * max(var, 0.0) ** 0.5
            c.execute(
                t.ratings.insert().values(
                    seq=seq,
                    match_id=match_id,
                    bot_id=bot_id,
                    at=now,
                    rating=ANCHOR_RATING + ELO_SCALE * centre,
                    low=ANCHOR_RATING + ELO_SCALE * (centre - spread),
                    high=ANCHOR_RATING + ELO_SCALE * (centre + spread),
                )
            )
