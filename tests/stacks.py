"""Tests of the real stacks (PHP, Go, Chromium) skip on a developer's machine that
lacks them, but never in CI: `.ci/run` installs them, so a missing one there fails."""

from __future__ import annotations

import os

import pytest


def needs(installed: bool, what: str) -> pytest.MarkDecorator:
    return pytest.mark.skipif(
        not installed and not os.environ.get("CI"),
        reason=f"needs {what} (CI installs it and never skips this)",
    )
