"""The ladder's tables (SQLAlchemy Core), the same on SQLite and PostgreSQL.

The migrations (`migrations/versions/`) create exactly these; the code reads and
writes through these objects, so a column's name is spelled once.
"""

from __future__ import annotations

import sqlalchemy as sa

metadata = sa.MetaData()

bots = sa.Table(
    "bots",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("name", sa.String(64), nullable=False, unique=True),
    sa.Column("owner", sa.String(64), nullable=True),
    sa.Column("status", sa.String(16), nullable=False),  # active | retired
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("retired_at", sa.Float, nullable=True),
    sa.Column("paused_at", sa.Float, nullable=True),
    sa.Column("paused_reason", sa.Text, nullable=True),
    sa.Column("good_streak", sa.Integer, nullable=False),  # matches played well in a row
    sa.Column("bad_streak", sa.Integer, nullable=False),  # seats missed or timed out in a row
    sa.Column("last_seen", sa.Float, nullable=True),
)

keys = sa.Table(
    "keys",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("hash", sa.String(64), nullable=False, unique=True),  # sha256 of the key
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("revoked_at", sa.Float, nullable=True),
)

servers = sa.Table(
    "servers",
    metadata,
    sa.Column("name", sa.String(64), primary_key=True),
    sa.Column("url", sa.Text, nullable=False),  # where its matches' seats are
    sa.Column("seen", sa.Float, nullable=False),
)

presence = sa.Table(
    "presence",
    metadata,
    sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), primary_key=True),
    sa.Column("server", sa.String(64), nullable=False),
    sa.Column("concurrent", sa.Integer, nullable=False),
    sa.Column("since", sa.Float, nullable=False),
    sa.Column("seen", sa.Float, nullable=False),
)

pairings = sa.Table(
    "pairings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("a_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("b_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
)

matches = sa.Table(
    "matches",
    metadata,
    sa.Column("id", sa.String(80), primary_key=True),
    sa.Column("pairing_id", sa.Integer, sa.ForeignKey("pairings.id"), nullable=False),
    sa.Column("leg", sa.Integer, nullable=False),
    sa.Column("seat0_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("seat1_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
    sa.Column("seed", sa.BigInteger, nullable=False),
    # pending (waiting for both bots) | assigned (a server claimed it) | playing | finished | void
    sa.Column("status", sa.String(16), nullable=False, index=True),
    sa.Column("server", sa.String(64), nullable=True),
    sa.Column("host_url", sa.Text, nullable=True),
    sa.Column("token0", sa.String(64), nullable=True),  # dropped once the match is over
    sa.Column("token1", sa.String(64), nullable=True),
    sa.Column("delivered0", sa.Boolean, nullable=False),
    sa.Column("delivered1", sa.Boolean, nullable=False),
    sa.Column("created_at", sa.Float, nullable=False),
    sa.Column("started_at", sa.Float, nullable=True),
    sa.Column("finished_at", sa.Float, nullable=True),
    sa.Column("score0", sa.Integer, nullable=True),
    sa.Column("score1", sa.Integer, nullable=True),
    sa.Column("fallbacks0", sa.Integer, nullable=True),
    sa.Column("fallbacks1", sa.Integer, nullable=True),
    sa.Column("reason", sa.Text, nullable=True),
    sa.Column("seq", sa.Integer, nullable=True, unique=True),  # order of results counted
)

ratings = sa.Table(
    "ratings",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
    sa.Column("match_id", sa.String(80), sa.ForeignKey("matches.id"), nullable=False),
    sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False, index=True),
    sa.Column("rating", sa.Float, nullable=False),
    sa.Column("low", sa.Float, nullable=False),
    sa.Column("high", sa.Float, nullable=False),
    sa.Column("at", sa.Float, nullable=False),
)

pauses = sa.Table(
    "pauses",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False, index=True),
    sa.Column("at", sa.Float, nullable=False),
    sa.Column("reason", sa.Text, nullable=False),
    sa.Column("lifted_at", sa.Float, nullable=True),
)

# One row: the number of results counted so far. A result is written holding its lock,
# so results are numbered without gaps and the ratings history follows that order.
state = sa.Table(
    "state",
    metadata,
    sa.Column("id", sa.Integer, primary_key=True),
    sa.Column("seq", sa.Integer, nullable=False),
)
