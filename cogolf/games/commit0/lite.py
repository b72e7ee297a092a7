"""The benchmark's "lite" split, prepared and checked here (`cogolf commit0 lite`).

Its 16 libraries, each from the PyPI release closest to its pin (or the
benchmark's pinned fork given as a local git repository at a commit); the run
itself is `cogolf.games.commit0.split`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogolf.games.commit0.split import GitSource, Library, Row, format_table, run_split

__all__ = ["BY_NAME", "LITE", "GitSource", "format_table", "run_lite"]

# `benchmark_ids`: the lines of the benchmark's `commit0/data/test_ids/<name>.bz2`
LITE = (
    Library("tinydb", "tinydb==4.8.0", 201),
    Library("simpy", "simpy==4.1.1", 140),
    Library("deprecated", "deprecated==1.2.14", 171),
    Library("wcwidth", "wcwidth==0.2.13", 38),
    Library("voluptuous", "voluptuous==0.15.2", 149),
    Library("cachetools", "cachetools==5.5.0", 215),
    Library("imapclient", "imapclient==3.0.1", 267),
    Library("marshmallow", "marshmallow==3.22.0", 1229),
    Library("jinja", "jinja2==3.1.4", 851),
    Library("cookiecutter", "cookiecutter==2.6.0", 367, ("freezegun", "pytest-mock")),
    Library("portalocker", "portalocker==2.10.1", 36),
    Library("parsel", "parsel==1.9.1", 206),
    Library("pyjwt", "pyjwt==2.8.0", 259),
    Library("chardet", "chardet==5.2.0", 376),
    Library("babel", "babel==2.16.0", 5663),
    Library("minitorch", "", 230, why="the PyPI project of that name is another library"),
)
BY_NAME = {lib.name: lib for lib in LITE}


async def run_lite(out: Path, **options: Any) -> list[Row]:
    """Prepare and check each lite library into `out/<name>/`; writes `out/lite.json`."""
    return await run_split("lite", LITE, out, **options)
