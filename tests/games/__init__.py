"""Tests of the games, one folder per game, mirroring cogolf/games/."""
