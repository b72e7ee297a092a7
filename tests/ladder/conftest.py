"""One real PostgreSQL server per test session, started in a temporary folder as an
unprivileged user (Debian's `postgresql`, which `.ci/run` installs); each test that asks
for `postgres_url` gets a database of its own on it. Without PostgreSQL the tests that
need it skip, except in CI, where they fail saying what is missing."""

from __future__ import annotations

import glob
import itertools
import os
import pwd
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest

SUPERUSER = "cogolf"
_databases = itertools.count()


def _bin() -> Path | None:
    found = sorted(
        glob.glob("/usr/lib/postgresql/*/bin/initdb"), key=lambda p: int(p.split("/")[4])
    )
    if found:
        return Path(found[-1]).parent
    initdb = shutil.which("initdb")
    return Path(initdb).parent if initdb else None


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _as_user() -> dict[str, Any]:
    """Run the server's commands as `nobody` when the tests run as root (PostgreSQL
    refuses root), as the current user otherwise."""
    if os.geteuid() != 0:
        return {}
    nobody = pwd.getpwnam("nobody")
    return {"user": nobody.pw_uid, "group": nobody.pw_gid, "extra_groups": []}


@pytest.fixture(scope="session")
def postgres_server() -> Iterator[str]:
    """The base URL (postgresql://cogolf@127.0.0.1:PORT) of a server for this session."""
    bin_dir = _bin()
    if bin_dir is None:
        message = (
            "PostgreSQL is not installed (no initdb under /usr/lib/postgresql/*/bin or on "
            "PATH): install Debian's postgresql package (.ci/run does)"
        )
        if os.environ.get("CI"):
            pytest.fail(message)
        pytest.skip(message)
    user = _as_user()
    root = Path(tempfile.mkdtemp(prefix="cogolf-pg-"))
    data = root / "data"
    if user:
        os.chown(root, user["user"], user["group"])
    env = {"PATH": os.environ.get("PATH", "/usr/bin:/bin"), "LC_ALL": "C", "HOME": str(root)}
    run: dict[str, Any] = dict(env=env, cwd=root, capture_output=True, text=True, **user)
    done = subprocess.run(
        [str(bin_dir / "initdb"), "-D", str(data), "-U", SUPERUSER, "--auth=trust",
         "--no-sync", "-E", "UTF8"],
        **run, timeout=120, check=False,
    )  # fmt: skip
    assert done.returncode == 0, f"initdb failed: {done.stderr}"
    port = _free_port()
    options = f"-c listen_addresses=127.0.0.1 -p {port} -k {root} -c fsync=off"
    done = subprocess.run(
        [str(bin_dir / "pg_ctl"), "-D", str(data), "-l", str(root / "log"), "-o", options,
         "-w", "-t", "60", "start"],
        **run, timeout=90, check=False,
    )  # fmt: skip
    log = (root / "log").read_text(errors="replace") if (root / "log").exists() else ""
    assert done.returncode == 0, f"PostgreSQL did not start: {done.stderr}{log[-2000:]}"
    try:
        yield f"postgresql://{SUPERUSER}@127.0.0.1:{port}"
    finally:
        subprocess.run(
            [str(bin_dir / "pg_ctl"), "-D", str(data), "-m", "immediate", "-w", "stop"],
            **run, timeout=60, check=False,
        )  # fmt: skip
        shutil.rmtree(root, ignore_errors=True)


@pytest.fixture
def postgres_url(postgres_server: str) -> str:
    """A fresh, empty database on the session's server."""
    import psycopg

    name = f"ladder_{os.getpid()}_{next(_databases)}_{int(time.time() * 1000) % 100000}"
    with psycopg.connect(f"{postgres_server}/postgres", autocommit=True) as conn:
        conn.execute(f'CREATE DATABASE "{name}"')
    return f"{postgres_server}/{name}"
