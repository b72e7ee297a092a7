"""Opening the ladder's database: SQLite (WAL) by default, PostgreSQL when given its URL.

SQLAlchemy Core is the one driver interface for both (psycopg 3 under PostgreSQL), and
Alembic keeps the schema's versions (`migrations/versions/`): opening a database
brings it to the newest version, in one transaction, so a server killed while
migrating leaves the old version whole. Two servers starting at once on one
database migrate one after the other (an advisory lock on PostgreSQL, SQLite's write
lock), and a database made by a newer version of this code is refused, not guessed at.

SQLite runs in WAL mode with `synchronous=NORMAL`: a commit is in the WAL file when it
returns, so `kill -9` of the server never loses a committed result (the WAL is
replayed when the database is opened again), and readers (the pages) never wait
for the writer. A power cut may lose the last commits (the WAL is synced at
checkpoints, not at every commit), never half of one. Every write transaction starts
with `BEGIN IMMEDIATE`, so two writers (two servers on one file) take turns instead
of failing halfway.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

import sqlalchemy as sa
from alembic import command
from alembic.config import Config
from alembic.runtime.migration import MigrationContext
from alembic.script import ScriptDirectory

MIGRATIONS = Path(__file__).parent / "migrations"
MIGRATE_LOCK = 0x636F676F6C66  # PostgreSQL advisory lock id ("cogolf")
BUSY_TIMEOUT_MS = 30_000


class DatabaseError(RuntimeError):
    """A database that cannot be used, with what to do about it."""


def database_url(database: str | None, data_dir: Path) -> str:
    """The URL to open: the one given, or the SQLite file under the data folder."""
    if database:
        if database.startswith(("postgresql://", "postgres://")):
            rest = database.split("://", 1)[1]
            return f"postgresql+psycopg://{rest}"
        if database.startswith(("sqlite:///", "postgresql+psycopg://")):
            return database
        raise DatabaseError(
            f"--database {database.split(':', 1)[0]}:...: give postgresql://... or sqlite:///PATH"
        )
    return f"sqlite:///{data_dir / 'ladder.sqlite'}"


def _sqlite_setup(engine: sa.Engine) -> None:
    @sa.event.listens_for(engine, "connect")
    def connect(dbapi: Any, _record: Any) -> None:
        dbapi.isolation_level = None  # SQLAlchemy's BEGIN below, not the driver's
        cursor = dbapi.cursor()
        cursor.execute(f"PRAGMA busy_timeout = {BUSY_TIMEOUT_MS}")
        cursor.execute("PRAGMA journal_mode = WAL")
        cursor.execute("PRAGMA synchronous = NORMAL")
        cursor.execute("PRAGMA foreign_keys = ON")
        cursor.close()

    @sa.event.listens_for(engine, "begin")
    def begin(conn: sa.Connection) -> None:
        # Readers (pages, standings) take no write lock; WAL gives them a snapshot.
        read_only = conn.get_execution_options().get("read_only", False)
        conn.exec_driver_sql("BEGIN" if read_only else "BEGIN IMMEDIATE")


def connect(url: str) -> sa.Engine:
    """An engine on `url` with the schema at its newest version."""
    if url.startswith("sqlite:///"):
        path = Path(url.removeprefix("sqlite:///"))
        try:
            path.parent.mkdir(parents=True, exist_ok=True)
        except OSError as exc:
            raise DatabaseError(f"{path.parent}: {exc.strerror}") from None
        engine = sa.create_engine(url, pool_size=8, max_overflow=8)
        _sqlite_setup(engine)
    else:
        engine = sa.create_engine(url, pool_size=8, max_overflow=8, pool_pre_ping=True)
    try:
        migrate(engine)
    except sa.exc.OperationalError as exc:
        engine.dispose()
        raise DatabaseError(f"cannot open the ladder's database: {exc.orig}") from None
    return engine


def head() -> str:
    return ScriptDirectory(str(MIGRATIONS)).get_current_head() or ""


def migrate(engine: sa.Engine) -> None:
    config = Config()
    config.set_main_option("script_location", str(MIGRATIONS))
    scripts = ScriptDirectory.from_config(config)
    with engine.begin() as conn:
        if conn.dialect.name == "postgresql":
            conn.exec_driver_sql(f"SELECT pg_advisory_xact_lock({MIGRATE_LOCK})")
        current = MigrationContext.configure(conn).get_current_revision()
        if current is not None and current not in {s.revision for s in scripts.walk_revisions()}:
            raise DatabaseError(
                f"the ladder's database is at schema version {current!r}, newer than this "
                f"cogolf knows (newest {head()!r}): run a newer cogolf on it"
            )
        config.attributes["connection"] = conn
        command.upgrade(config, "head")


def reading(engine: sa.Engine) -> sa.Connection:
    """A connection for reads only (no write lock on SQLite); use it in a `with`."""
    return engine.connect().execution_options(read_only=True)


def version(engine: sa.Engine) -> str | None:
    with reading(engine) as conn:
        return MigrationContext.configure(conn).get_current_revision()
