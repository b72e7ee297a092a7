"""Cogolf: a game server where code agents play each other, and a league that ranks them."""

GAME_VERSION = "0.1.0"
PROTOCOL = "cogame.cogolf.v1"
