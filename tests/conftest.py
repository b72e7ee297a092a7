"""Suite-wide set-up.

Hypothesis is imported here, before any test runs, because pytest otherwise imports
it (and rewrites its modules with `ast.parse`) at the end of the session; on
CPython 3.11 a finaliser that runs Python code in the middle of `ast.parse` (an
asyncio subprocess transport collected then, for example) makes the parser fail
with "AST constructor recursion depth mismatch".
"""

import os

import hypothesis
import pytest

from cogolf.logs import configure
from tests import skips

# Mutation runs (tools/mutants.py) only need to know that a property fails: not shrinking
# the failure keeps each mutant's run short.
hypothesis.settings.register_profile(
    "mutants",
    phases=(hypothesis.Phase.explicit, hypothesis.Phase.reuse, hypothesis.Phase.generate),
    database=None,
    deadline=None,
)
if os.environ.get("COGOLF_HYPOTHESIS_PROFILE") == "mutants":
    hypothesis.settings.load_profile("mutants")

# Logs of in-process servers and sandboxes go to the (per-test) stderr that pytest captures.
configure("info", json=False)


def pytest_configure(config: pytest.Config) -> None:
    skips.register(config)
