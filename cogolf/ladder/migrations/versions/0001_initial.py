"""The first schema: bots, keys, servers, presence, pairings, matches, ratings, pauses."""

import sqlalchemy as sa
from alembic import op

revision = "0001"
down_revision = None
branch_labels = None
depends_on = None


def upgrade() -> None:
    op.create_table(
        "bots",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("name", sa.String(64), nullable=False, unique=True),
        sa.Column("owner", sa.String(64), nullable=True),
        sa.Column("status", sa.String(16), nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("retired_at", sa.Float, nullable=True),
        sa.Column("paused_at", sa.Float, nullable=True),
        sa.Column("paused_reason", sa.Text, nullable=True),
        sa.Column("good_streak", sa.Integer, nullable=False),
        sa.Column("bad_streak", sa.Integer, nullable=False),
        sa.Column("last_seen", sa.Float, nullable=True),
    )
    op.create_table(
        "keys",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("hash", sa.String(64), nullable=False, unique=True),
        sa.Column("created_at", sa.Float, nullable=False),
        sa.Column("revoked_at", sa.Float, nullable=True),
    )
    op.create_table(
        "servers",
        sa.Column("name", sa.String(64), primary_key=True),
        sa.Column("url", sa.Text, nullable=False),
        sa.Column("seen", sa.Float, nullable=False),
    )
    op.create_table(
        "presence",
        sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), primary_key=True),
        sa.Column("server", sa.String(64), nullable=False),
        sa.Column("concurrent", sa.Integer, nullable=False),
        sa.Column("since", sa.Float, nullable=False),
        sa.Column("seen", sa.Float, nullable=False),
    )
    op.create_table(
        "pairings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("a_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("b_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("created_at", sa.Float, nullable=False),
    )
    op.create_table(
        "matches",
        sa.Column("id", sa.String(80), primary_key=True),
        sa.Column("pairing_id", sa.Integer, sa.ForeignKey("pairings.id"), nullable=False),
        sa.Column("leg", sa.Integer, nullable=False),
        sa.Column("seat0_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("seat1_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False),
        sa.Column("seed", sa.BigInteger, nullable=False),
        sa.Column("status", sa.String(16), nullable=False, index=True),
        sa.Column("server", sa.String(64), nullable=True),
        sa.Column("host_url", sa.Text, nullable=True),
        sa.Column("token0", sa.String(64), nullable=True),
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
        sa.Column("seq", sa.Integer, nullable=True, unique=True),
    )
    op.create_table(
        "ratings",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False),
        sa.Column("match_id", sa.String(80), sa.ForeignKey("matches.id"), nullable=False),
        sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False, index=True),
        sa.Column("rating", sa.Float, nullable=False),
        sa.Column("low", sa.Float, nullable=False),
        sa.Column("high", sa.Float, nullable=False),
        sa.Column("at", sa.Float, nullable=False),
    )
    op.create_table(
        "pauses",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("bot_id", sa.Integer, sa.ForeignKey("bots.id"), nullable=False, index=True),
        sa.Column("at", sa.Float, nullable=False),
        sa.Column("reason", sa.Text, nullable=False),
        sa.Column("lifted_at", sa.Float, nullable=True),
    )
    op.create_table(
        "state",
        sa.Column("id", sa.Integer, primary_key=True),
        sa.Column("seq", sa.Integer, nullable=False),
    )
    op.execute("INSERT INTO state (id, seq) VALUES (1, 0)")


def downgrade() -> None:
    for name in (
        "state",
        "pauses",
        "ratings",
        "matches",
        "pairings",
        "presence",
        "servers",
        "keys",
        "bots",
    ):
        op.drop_table(name)
