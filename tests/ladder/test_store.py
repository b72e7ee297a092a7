"""The ladder's database on SQLite: keys, migrations, claiming, results, pauses, kill -9."""

from __future__ import annotations

import os
import signal
import sqlite3
import subprocess
import sys
import time
from pathlib import Path

import pytest
import sqlalchemy as sa

from cogolf.ladder import db
from cogolf.ladder import schema as t
from cogolf.ladder.store import PAUSE_AFTER, LadderError, Outcome, Store

WELL = Outcome(scores=(3, 1), fallbacks=(0, 0), holes=4, reason="complete", absent=(False, False))


def open_store(tmp_path: Path) -> Store:
    return Store(db.connect(db.database_url(None, tmp_path)))


def ready(store: Store, *names: str, concurrent: int = 1, owner: str | None = None) -> list:
    bots = []
    for name in names:
        key = store.add_bot(name, owner)
        bot = store.authenticate(key)
        store.join(bot, "s1", concurrent)
        bots.append(bot)
    return bots


def test_keys_are_shown_once_stored_hashed_and_refused_when_wrong_revoked_or_retired(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path)
    key = store.add_bot("alice")
    assert store.authenticate(key).name == "alice"
    store.engine.dispose()
    raw = b"".join(p.read_bytes() for p in tmp_path.glob("ladder.sqlite*"))
    assert key.encode() not in raw  # only its hash is kept
    store = open_store(tmp_path)
    for wrong, why in (
        ("cgk_" + "A" * 43, "unknown key"),
        (key[:-1], "not a ladder key"),
        (key + "x", "not a ladder key"),
        ("", "not a ladder key"),
    ):
        with pytest.raises(LadderError, match=why) as refused:
            store.authenticate(wrong)
        assert refused.value.status == 401
    new = store.rotate("alice")
    with pytest.raises(LadderError, match="revoked"):
        store.authenticate(key)
    assert store.authenticate(new).name == "alice"
    store.retire("alice")
    with pytest.raises(LadderError, match="retired"):
        store.authenticate(new)
    with pytest.raises(LadderError, match="exists") as again:
        store.add_bot("alice")  # a retired bot keeps its name and history
    assert again.value.status == 409
    with pytest.raises(LadderError, match="no bot named"):
        store.rotate("nobody")


def test_bot_names_and_owners_are_bounded(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    store.add_bot("a" * 64)  # the last length accepted
    for bad in ("a" * 65, "", "-lead", "has space", "slash/name", "é"):
        with pytest.raises(LadderError, match="bot name") as refused:
            store.add_bot(bad)
        assert refused.value.status == 400
    store.add_bot("owned", "o" * 64)
    with pytest.raises(LadderError, match="owner"):
        store.add_bot("owned2", "o" * 65)


def test_migrations_bring_a_database_to_the_newest_version_and_refuse_a_newer_one(
    tmp_path: Path,
) -> None:
    url = db.database_url(None, tmp_path)
    engine = db.connect(url)
    assert db.version(engine) == db.head() == "0001"
    engine.dispose()
    engine = db.connect(url)  # again: nothing to do, nothing lost
    assert db.version(engine) == "0001"
    with engine.begin() as c:
        assert c.execute(sa.text("PRAGMA journal_mode")).scalar() == "wal"
        c.execute(sa.text("UPDATE alembic_version SET version_num = '9999'"))
    engine.dispose()
    with pytest.raises(db.DatabaseError, match="newer than this cogolf knows"):
        db.connect(url)
    with pytest.raises(db.DatabaseError, match="give postgresql"):
        db.database_url("mysql://x", tmp_path)


def test_claims_keep_capacity_probation_and_both_seat_orders_on_one_seed(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    a, b, c, d = ready(store, "a", "b", "c", "d", concurrent=4)
    claimed = store.claim("s1", "http://h")
    # On probation every bot plays one match at a time, though it asked for four.
    seats = [bot for m in claimed for bot in m.seat_ids]
    assert len(claimed) == 2 and sorted(seats) == sorted([a.id, b.id, c.id, d.id])
    assert store.claim("s1", "http://h") == []  # nobody is free
    first = claimed[0]
    assert store.record(first.match_id, "s1", WELL)
    assert not store.record(first.match_id, "s1", WELL)  # a result is written once
    assert not store.record(claimed[1].match_id, "s2", WELL)  # and only by its host
    again = store.claim("s1", "http://h")
    mirror = [m for m in again if set(m.seat_ids) == set(first.seat_ids)]
    assert mirror and mirror[0].seat_ids == first.seat_ids[::-1]
    assert mirror[0].seed == first.seed
    assert mirror[0].match_id.rsplit("-", 1)[0] == first.match_id.rsplit("-", 1)[0]


def test_seats_never_connected_void_the_match_and_pause_the_bot_after_three(
    tmp_path: Path,
) -> None:
    store = open_store(tmp_path)
    ready(store, "ghost", "h1", "h2", "h3", "h4")
    for n in range(PAUSE_AFTER):
        claimed = store.claim("s1", "http://h")
        ghost_match = next(m for m in claimed if m.names[0] == "ghost" or m.names[1] == "ghost")
        slot = ghost_match.names.index("ghost")
        absent = (slot == 0, slot == 1)
        out = Outcome(scores=(0, 0), fallbacks=(4, 4), holes=4, reason="complete", absent=absent)
        assert store.record(ghost_match.match_id, "s1", out)
        for m in claimed:
            if m is not ghost_match:
                store.record(m.match_id, "s1", WELL)
        with store.reading() as c:
            row = c.execute(
                sa.select(t.matches).where(t.matches.c.id == ghost_match.match_id)
            ).one()
            ghost = c.execute(sa.select(t.bots).where(t.bots.c.name == "ghost")).one()
        assert row.status == "void" and row.seq is None
        assert f"seat {slot} never connected" in row.reason
        assert (ghost.paused_at is not None) == (n == PAUSE_AFTER - 1)
    assert "3 bad matches in a row; the last missed its seat in" in ghost.paused_reason
    later = store.claim("s1", "http://h")
    assert all("ghost" not in m.names for m in later)
    store.unpause("ghost")
    with store.reading() as c:
        ghost = c.execute(sa.select(t.bots).where(t.bots.c.name == "ghost")).one()
        lifted = c.execute(sa.select(t.pauses.c.lifted_at)).scalars().all()
    assert ghost.paused_at is None and ghost.bad_streak == PAUSE_AFTER - 1  # on probation
    assert all(x is not None for x in lifted)


def test_two_bots_of_one_owner_are_never_paired(tmp_path: Path) -> None:
    store = open_store(tmp_path)
    ready(store, "mine1", "mine2", owner="mallory")
    assert store.claim("s1", "http://h") == []
    ready(store, "other")
    claimed = store.claim("s1", "http://h")
    assert len(claimed) == 1 and "other" in claimed[0].names


WRITER = """
import sys, itertools
from cogolf.ladder import db
from cogolf.ladder.store import Store, Outcome
store = Store(db.connect(db.database_url(None, __import__("pathlib").Path(sys.argv[1]))))
bots = [store.authenticate(store.add_bot(f"w{i}")) for i in range(4)]
for bot in bots:
    store.join(bot, "s1", 1)
print("ready", flush=True)
for n in itertools.count():
    for m in store.claim("s1", "http://h"):
        store.record(m.match_id, "s1", Outcome((n % 3, 1), (0, 0), 4, "complete", (False, False)))
"""


@pytest.mark.slow
def test_a_writer_killed_mid_write_leaves_no_half_written_result(tmp_path: Path) -> None:
    proc = subprocess.Popen([sys.executable, "-c", WRITER, str(tmp_path)], stdout=subprocess.PIPE)
    assert proc.stdout is not None and proc.stdout.readline() == b"ready\n"
    deadline = time.monotonic() + 30
    store = open_store(tmp_path)
    while store.seq() < 20 and time.monotonic() < deadline:
        time.sleep(0.05)
    os.kill(proc.pid, signal.SIGKILL)
    proc.wait()
    store.engine.dispose()
    con = sqlite3.connect(tmp_path / "ladder.sqlite")
    assert con.execute("PRAGMA integrity_check").fetchone() == ("ok",)
    con.close()
    store = open_store(tmp_path)
    with store.reading() as c:
        seq = c.execute(sa.select(t.state.c.seq)).scalar_one()
        counted = (
            c.execute(
                sa.select(t.matches.c.seq)
                .where(t.matches.c.seq.is_not(None))
                .order_by(t.matches.c.seq)
            )
            .scalars()
            .all()
        )
        finished = c.execute(
            sa.select(sa.func.count()).where(t.matches.c.status == "finished")
        ).scalar_one()
        per_result = c.execute(
            sa.select(t.ratings.c.seq, sa.func.count()).group_by(t.ratings.c.seq)
        ).all()
    assert seq >= 20
    assert counted == list(range(1, seq + 1))  # numbered without gaps, none half-counted
    assert finished == seq
    assert dict(per_result) == {s: 2 for s in counted}  # each result has its two ratings
    # The bots' matches still open are the ones claimed when it died: resumable or voidable.
    assert store.hosted("s1") == [m for m in store.hosted("s1") if m.status in ("assigned",)]


def test_the_ladder_cli_refuses_bad_input_with_the_reason(tmp_path: Path) -> None:
    def ladder(*args: str) -> subprocess.CompletedProcess[str]:
        return subprocess.run(
            [sys.executable, "-m", "cogolf", "ladder", *args, "--data", str(tmp_path)],
            capture_output=True, text=True, timeout=60, check=False,
        )  # fmt: skip

    added = ladder("add", "alice")
    assert added.returncode == 0 and added.stdout.splitlines()[-1].startswith("cgk_")
    for args, why in (
        (("add", "alice"), "a bot named 'alice' exists"),
        (("rotate", "nobody"), "no bot named 'nobody'"),
        (("standings", "--database", "postgresql://u@127.0.0.1:1/x"), "cannot open the ladder"),
    ):
        done = ladder(*args)
        assert done.returncode == 2 and why in done.stderr, (args, done.stderr)
