"""The benchmark's whole split, prepared and checked here (`cogolf commit0 full`).

Its 54 libraries (the benchmark's dataset; its `SPLIT_ALL` still names PyBoy and
pytest, which the dataset dropped): the 16 lite ones as `cogolf.games.commit0.lite`
pins them, and 38 more, each from the PyPI release closest to the commit the
benchmark pins (its dataset's tag, or for a bare commit the nearest release by
history). `benchmark_ids` is the line count of the benchmark's
`commit0/data/test_ids/<name>.bz2`. `requirements` are test requirements the
sdist does not declare (they live in repository files an sdist does not ship);
`extras` those the benchmark installs (`pip install -e .[dev]`). The run itself
is `cogolf.games.commit0.split`.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from cogolf.games.commit0.lite import LITE
from cogolf.games.commit0.split import Library, Row, run_split

OTHERS = (
    # its mypy cases expect the messages of the mypy of its day
    Library("attrs", "attrs==24.2.0", 1414, ("mypy<1.12",)),
    Library("bitstring", "bitstring==4.2.3", 834, ("gfloat", "hypothesis", "pytest-benchmark")),
    Library("click", "click==8.1.7", 589),
    Library("dnspython", "dnspython==2.6.1", 1304),
    # pinned at a commit between 0.22.1 and 0.22.2 (2024-08-19)
    Library("dulwich", "dulwich==0.22.1", 1522),
    Library("fabric", "fabric==3.2.2", 353),
    Library("fastapi", "fastapi==0.112.1", 2013),
    Library("filesystem_spec", "fsspec==2024.6.1", 698),
    Library("flask", "flask==3.0.3", 477),
    Library("geopandas", "geopandas==1.0.1", 1519),
    Library("graphene", "graphene==3.3", 440),
    Library("imbalanced-learn", "imbalanced-learn==0.12.3", 1445),
    Library("jedi", "jedi==0.19.1", 3814),
    Library("joblib", "joblib==1.4.2", 1445),
    Library("loguru", "loguru==0.7.2", 1461),
    Library("mimesis", "mimesis==17.0.0", 6159),
    Library("more-itertools", "more-itertools==10.4.0", 662),
    Library("moviepy", "moviepy==1.0.3", 108),
    Library("networkx", "networkx==3.3", 5436),
    # its tests/conftest.py imports invoke and icecream; its dev-requirements.txt names them
    Library("paramiko", "paramiko==3.4.1", 557, ("invoke>=2.0", "icecream>=2.1",
                                                 "pytest-relaxed>=2")),
    Library("pexpect", "pexpect==4.9.0", 255),
    Library("pydantic", "pydantic==2.8.2", 5091),
    Library("pylint", "pylint==3.2.6", 1868),
    Library("pypdf", "pypdf==4.3.1", 910),
    Library("python-progressbar", "progressbar2==4.4.2", 385),
    Library("python-prompt-toolkit", "prompt-toolkit==3.0.43", 151),
    Library("python-rsa", "rsa==4.9", 86),
    Library("requests", "requests==2.32.3", 590),
    Library("scrapy", "scrapy==2.11.2", 2904),
    Library("seaborn", "seaborn==0.13.2", 2362),
    # pinned 118 commits after 8.0.2, 134 before 8.1.0
    Library("sphinx", "sphinx==8.0.2", 2187),
    Library("sqlparse", "sqlparse==0.5.1", 461),
    Library("statsmodels", "statsmodels==0.14.1", 17669),
    # pinned 18 commits after 0.8.0-beta1, 3 before 0.8.0-beta2
    # its unit_tests import hypothesis (the repository's requirements, not the sdist's)
    Library("tlslite-ng", "tlslite-ng==0.8.0b2", 1653, ("hypothesis",)),
    Library("tornado", "tornado==6.4.1", 1150),
    Library("virtualenv", "virtualenv==20.26.3", 296),
    Library("web3.py", "web3==6.20.2", 40795),
    Library("xarray", "xarray==2024.7.0", 15643),
)
FULL = (*LITE, *OTHERS)
BY_NAME = {lib.name: lib for lib in FULL}


async def run_full(out: Path, **options: Any) -> list[Row]:
    """Prepare and check each library of the split into `out/<name>/`; writes
    `out/full.json`."""
    return await run_split("full", FULL, out, **options)
