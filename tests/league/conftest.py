"""Fixtures of the league tests."""

from __future__ import annotations

import os
import shutil
import tempfile
from collections.abc import Iterator
from pathlib import Path

import pytest


@pytest.fixture
def bot_dir() -> Iterator[Path]:
    """A folder every user can read: bots run as unprivileged uids, and pytest's own
    temporary folders are private to root."""
    path = Path(tempfile.mkdtemp(prefix="cogolf-bots-"))
    os.chmod(path, 0o755)
    yield path
    shutil.rmtree(path, ignore_errors=True)
