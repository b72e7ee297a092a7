"""Start-up: a subcommand imports what it runs and nothing else (issue 16).

Times are measured by `cogolf bench startup`, never here; these tests pin the
cause instead: which modules a process has imported.
"""

from __future__ import annotations

import json
import subprocess
import sys

from tests.cli.run import cogolf, imported_by

SERVER = {"uvicorn", "starlette", "cogolf.server.run", "cogolf.server.app"}
GAMES = {"cogolf.games.registry", "cogolf.games.golf.courses", "cogolf.games.commit0.game"}


def test_help_lists_every_command_without_importing_any() -> None:
    done = cogolf("--help")
    assert done.returncode == 0
    for name in ("play", "serve", "bot", "replay", "league", "golf", "commit0", "bench"):
        assert f"    {name} " in done.stdout
    modules = imported_by("--help")
    assert "cogolf.cli" in modules
    assert not {m for m in modules if m.startswith("cogolf.commands")}
    assert not modules & {"structlog", "msgspec", "asyncio", "websockets", *SERVER}


def test_bot_imports_neither_the_server_nor_the_games() -> None:
    modules = imported_by("bot", "--help")
    assert "cogolf.commands.bot" in modules and "cogolf.bots.client" in modules
    assert not modules & (SERVER | GAMES)
    assert "cogolf.commands.play" not in modules


def test_play_in_process_imports_no_server(tmp_path) -> None:
    modules = imported_by("play", "--in-process", "--holes", "1", "--replays", str(tmp_path / "r"))
    assert "cogolf.runtime.local" in modules  # the match was played
    assert not modules & SERVER
    assert list((tmp_path / "r").glob("*.ndjson"))


def test_each_subcommand_help_still_works() -> None:
    for name in ("play", "serve", "bot", "schema", "doctor"):
        done = cogolf(name, "--help")
        assert done.returncode == 0, done.stderr
        assert f"usage: cogolf {name}" in done.stdout


def test_bench_startup_prints_its_figures() -> None:
    done = subprocess.run(
        [
            sys.executable,
            "-m",
            "cogolf",
            "bench",
            "startup",
            "--runs",
            "1",
            "--play-runs",
            "1",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert done.returncode == 0, done.stderr
    doc = json.loads(done.stdout)
    assert doc["help_seconds"]["median"] > 0
    assert 0 < doc["bot_connected_seconds"]["median"] < 30
    assert set(doc["play_in_process_seconds"]) == {"1", "9"}
    assert doc["play_in_process_cpu_seconds"]["9"]["median"] > 0


def test_play_in_process_starts_only_the_fork_servers_it_needs(tmp_path) -> None:
    """The one of the match's hash seed, not one for every hash seed a server keeps
    ready, nor the sandbox's own (its start-up probe runs on the match's)."""
    done = cogolf(
        "play", "--in-process", "--holes", "1", "--replays", str(tmp_path), "--log-level", "info"
    )
    assert done.returncode == 0, done.stderr
    started = [json.loads(line) for line in done.stderr.splitlines() if "zygote started" in line]
    assert len(started) == 1
