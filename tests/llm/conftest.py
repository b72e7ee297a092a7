from __future__ import annotations

from collections.abc import Iterator

import pytest

from cogolf.llm.fake import FakeProvider
from tests.llm.helpers import KEY, KEY_ENV


@pytest.fixture
def fake(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeProvider() as provider:
        yield provider
