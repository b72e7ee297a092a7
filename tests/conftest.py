"""Suite-wide set-up.

Hypothesis is imported here, before any test runs, because pytest otherwise imports
it (and rewrites its modules with `ast.parse`) at the end of the session; on
CPython 3.11 a finaliser that runs Python code in the middle of `ast.parse` (an
asyncio subprocess transport collected then, for example) makes the parser fail
with "AST constructor recursion depth mismatch".
"""

import hypothesis  # noqa: F401

from cogolf.logs import configure

# Logs of in-process servers and sandboxes go to the (per-test) stderr that pytest captures.
configure("info", json=False)
