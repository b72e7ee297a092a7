from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import pytest

from tests.replay.helpers import SharedSandbox, play_in_process


@pytest.fixture(scope="session")
def honest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A real two-hole match played in process: the file every mutation starts from."""
    return play_in_process(tmp_path_factory.mktemp("honest") / "honest-1.ndjson")


@pytest.fixture(scope="session")
def shared() -> Iterator[SharedSandbox]:
    s = SharedSandbox()
    try:
        yield s
    finally:
        s.close()
