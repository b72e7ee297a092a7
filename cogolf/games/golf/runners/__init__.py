"""Running golf submissions behind the sandbox walls, one process per hole.

Each language has a child harness that loads the file once, calls `f` for every
test under a per-test time limit, and reports each result on its own marked
stdout line; the parent hands over one test at a time and keeps the time limits
itself (`paced`), and turns that output into a `BatchResult` (`protocol`) that
cannot be crashed by whatever the program printed.
"""
