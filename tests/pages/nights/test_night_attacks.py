"""Hostile night folders against a real `cogolf serve` and a real `league publish`:
symlinks, FIFOs, huge and many files, crafted progress files, odd file names, and
sites holding links planted by someone else. Each attack asserts what must hold:
nothing outside the night is read or written, every request answers, errors are clear."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
import time
import urllib.error
import urllib.request
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest

from tests.serving import start_serve

from .conftest import Nights, Server, cogolf

SECRET = "SECRET-3f9a"  # in files outside every night: must never reach a page or a site


@pytest.fixture(scope="module")
def root(nights: Nights, tmp_path_factory: pytest.TempPathFactory) -> Path:
    """Its own copy of the hostile night (attacks here plant files in it), and an outside
    folder of secrets: a standings file, a replay, a golf result, a progress file."""
    base = tmp_path_factory.mktemp("attacks")
    shutil.copytree(nights.replays / "hostile", base / "replays" / "hostile")
    shutil.copytree(nights.league / "hostile", base / "league" / "hostile")
    outside = base / "outside"
    outside.mkdir()
    doc = json.loads((nights.league / "real" / "standings.json").read_text())
    doc["games"]["cogolf"]["table"][0]["name"] = SECRET
    (outside / "standings.json").write_text(json.dumps(doc))
    replay = (nights.replays / "real" / "real-literalist-vs-pedant.ndjson").read_text()
    (outside / "m.ndjson").write_text(replay.replace("literalist", SECRET))
    golf = next((nights.replays / "hostile" / "golf").iterdir())
    (outside / "golf.json").write_text(golf.read_text().replace("plain", SECRET))
    (outside / "progress.json").write_text(json.dumps({
        "state": "matches", "done": 1, "total": 2, "pid": os.getpid(),
        "leaders": [{"name": SECRET, "points": 1, "margin": 0}]}))  # fmt: skip
    return base


@pytest.fixture(scope="module")
def served(root: Path) -> Iterator[Server]:
    """`cogolf serve` on the attack root; killed at the end even if a thread hangs."""
    proc, url = start_serve(
        "--data", str(root / "data"), "--league-dir", str(root / "league"),
        "--league-replays", str(root / "replays"), cwd=root,
    )  # fmt: skip
    yield Server(url, proc)
    proc.terminate()
    try:
        proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        proc.kill()
        proc.wait()


def night_copy(root: Path, name: str, *, standings: bool = True) -> Path:
    """A fresh night `name` made of the hostile one; returns its replay folder."""
    folder = root / "replays" / name
    shutil.copytree(root / "replays" / "hostile", folder)
    doc = json.loads((folder / "night.json").read_text())
    (folder / "night.json").write_text(json.dumps({**doc, "name": name}))
    if standings:
        (root / "league" / name).mkdir()
        shutil.copyfile(root / "league" / "hostile" / "standings.json",
                        root / "league" / name / "standings.json")  # fmt: skip
    return folder


def every_page(url: str, night: str, match: str = "x") -> list[tuple[str, int, str]]:
    paths = ["/", "/nights", f"/nights/{night}", f"/nights/{night}/progress.json",
             f"/nights/{night}/matches/{match}"]  # fmt: skip
    return [(p, *get_quick(url + p)) for p in paths]


def get_quick(url: str, timeout: float = 15) -> tuple[int, str]:
    """Status and body; a request the server never answers fails the test (a timeout)."""
    try:
        with urllib.request.urlopen(url, timeout=timeout) as res:
            return res.status, res.read().decode()
    except urllib.error.HTTPError as exc:
        return exc.code, exc.read().decode()


def test_symlinked_files_in_a_night_are_never_followed(served: Server, root: Path):
    folder = night_copy(root, "links")
    outside = root / "outside"
    standings = root / "league" / "links" / "standings.json"
    standings.unlink()
    standings.symlink_to(outside / "standings.json")
    (folder / "linked.ndjson").symlink_to(outside / "m.ndjson")
    (folder / "golf" / "linked.json").symlink_to(outside / "golf.json")
    (folder / "progress.json").symlink_to(outside / "progress.json")
    (folder / "shadow.ndjson").symlink_to("/etc/shadow")
    for path, status, body in every_page(served.url, "links", "linked"):
        assert SECRET not in body, path
        assert "root:" not in body, path
        assert status in (200, 404), (path, status)
    status, body = get_quick(f"{served.url}/nights/links")
    assert "standings.json: not a regular file" in body and "status-running" not in body
    assert get_quick(f"{served.url}/nights/links/matches/linked")[0] == 404
    assert get_quick(f"{served.url}/nights/links/matches/shadow")[0] == 404


def test_a_night_folder_linked_into_the_other_root_is_not_read(served: Server, root: Path):
    """A night listed by its standings whose replay folder is a symlink elsewhere."""
    (root / "league" / "halfway").mkdir()
    shutil.copyfile(root / "league" / "hostile" / "standings.json",
                    root / "league" / "halfway" / "standings.json")  # fmt: skip
    elsewhere = root / "outside" / "halfway"
    elsewhere.mkdir()
    shutil.copyfile(root / "outside" / "m.ndjson", elsewhere / "hostile-m000-001.ndjson")
    (elsewhere / "progress.json").write_text((root / "outside" / "progress.json").read_text())
    (root / "replays" / "halfway").symlink_to(elsewhere, target_is_directory=True)
    for path, _status, body in every_page(served.url, "halfway", "hostile-m000-001"):
        assert SECRET not in body, path
    assert get_quick(f"{served.url}/nights/halfway/matches/hostile-m000-001")[0] == 404


def test_fifos_in_a_night_folder_hang_nothing(served: Server, root: Path):
    """Every file a page reads made a FIFO: a reader would wait forever for a writer,
    and forty of them would take every worker thread of the server."""
    folder = night_copy(root, "fifos")
    (root / "league" / "fifos" / "standings.json").unlink()
    os.mkfifo(root / "league" / "fifos" / "standings.json")
    for name in ("progress.json", "fifo-m.ndjson"):
        os.mkfifo(folder / name)
    # listed by its standings, its manifest and a golf result FIFOs
    other = night_copy(root, "fifo-manifest")
    (other / "night.json").unlink()
    os.mkfifo(other / "night.json")
    os.mkfifo(other / "golf" / "fifo.json")
    urls = [served.url + p for p in ("/", "/nights", "/nights/fifos",
            "/nights/fifos/progress.json", "/nights/fifos/matches/fifo-m",
            "/nights/fifo-manifest")] * 8  # fmt: skip
    with ThreadPoolExecutor(16) as pool:
        answers = list(pool.map(lambda u: get_quick(u, timeout=20), urls))
    for url, (status, _body) in zip(urls, answers, strict=True):
        assert status in (200, 404), url
    status, body = get_quick(f"{served.url}/nights/fifos")
    assert status == 200 and "standings.json: not a regular file" in body
    assert get_quick(f"{served.url}/nights/fifos/matches/fifo-m")[0] == 404
    status, body = get_quick(f"{served.url}/nights/fifo-manifest")
    assert status == 200 and "golf/fifo.json: not a regular file" in body
    assert get_quick(f"{served.url}/nights/hostile")[0] == 200


def test_a_huge_standings_file_is_refused_quickly(served: Server, root: Path):
    night_copy(root, "huge")
    with open(root / "league" / "huge" / "standings.json", "r+b") as f:
        f.truncate(2**30)  # a sparse gigabyte of zeros
    started = time.monotonic()
    status, body = get_quick(f"{served.url}/nights/huge")
    assert status == 200 and "larger than 16777216 bytes" in body
    assert get_quick(f"{served.url}/nights")[0] == 200
    assert time.monotonic() - started < 10


@pytest.mark.slow
def test_a_night_of_100000_replays_and_many_nights(served: Server, root: Path):
    """100,000 replay files in one night (no standings yet: its page lists the newest)
    and 300 nights: the nights list shows a bounded number, every page answers."""
    folder = root / "replays" / "crowded"
    folder.mkdir()
    (folder / "night.json").write_text('{"format": "cogolf-night", "name": "crowded"}')
    for i in range(100_000):
        os.close(os.open(folder / f"crowded-{i:06d}.ndjson", os.O_CREAT | os.O_WRONLY, 0o644))
    for i in range(300):
        n = root / "replays" / f"many-{i:03d}"
        n.mkdir()
        (n / "night.json").write_text('{"format": "cogolf-night", "entrants": []}')
    for path in ("/", "/nights", "/nights/crowded", "/nights/crowded/matches/crowded-000007"):
        started = time.monotonic()
        status, body = get_quick(served.url + path, timeout=30)
        assert status == 200, path
        assert time.monotonic() - started < 10, path
    _, body = get_quick(f"{served.url}/nights")
    assert body.count('href="/nights/') <= 200 and "newest 200 of" in body
    _, body = get_quick(f"{served.url}/nights/crowded")
    assert body.count("/nights/crowded/matches/") == 50


@pytest.mark.parametrize("pid", [2**70, -(2**70), 1e300, "1", True, -1, 0, None, [1]])
def test_a_crafted_pid_in_progress_is_only_probed_harmlessly(
    served: Server, root: Path, pid: object
):
    """A pid no process can have, a negative one (a process group for kill), or
    another type: every page answers and the night reads as stopped."""
    name = f"pid-{abs(hash(repr(pid))) % 10**8}"
    folder = night_copy(root, name, standings=False)
    (folder / "progress.json").write_text(json.dumps({
        "state": "matches", "done": 1, "total": 30, "pid": pid,
        "leaders": [{"name": "<b>x</b>", "points": 1, "margin": 0}]}))  # fmt: skip
    for path, status, body in every_page(served.url, name):
        assert status in (200, 404), (path, status, body[:300])
    doc = json.loads(get_quick(f"{served.url}/nights/{name}/progress.json")[1])
    assert doc["state"] == "stopped"


def test_odd_replay_file_names_are_not_match_pages(served: Server, root: Path):
    """Non-UTF-8, markup, dots and escapes in a replay's file name: the page renders,
    such a file is no match, and nothing of its name runs."""
    folder = night_copy(root, "oddnames")
    replay = next(folder.glob("*.ndjson")).read_bytes()
    for raw in (b"\xff\xfe", b"<img src=x onerror=alert(1)>", b"..", b"%2e%2e", b"", b"a b"):
        with open(os.path.join(os.fsencode(folder), raw + b".ndjson"), "wb") as f:
            f.write(replay)
        os.mkfifo(os.path.join(os.fsencode(folder / "golf"), raw + b".json"))
    status, body = get_quick(f"{served.url}/nights/oddnames")
    assert status == 200 and "<img src=x" not in body and "Error" not in body
    (root / "league" / "oddnames" / "standings.json").unlink()  # now its newest replays
    status, body = get_quick(f"{served.url}/nights/oddnames")
    assert status == 200 and "<img src=x" not in body and "hostile-m000-001" in body
    for mid in ("%252e%252e", "%2e%2e", "a%20b", "%FF%FE"):
        assert get_quick(f"{served.url}/nights/oddnames/matches/{mid}")[0] == 404, mid
    assert get_quick(f"{served.url}/")[0] == 200


def publish(root: Path, night: str, out: Path) -> subprocess.CompletedProcess[str]:
    return cogolf("league", "publish", str(root / "replays" / night), "--out", str(out),
                  "--league-dir", str(root / "league"), cwd=root)  # fmt: skip


def test_publish_copies_nothing_from_outside_the_night(root: Path, tmp_path: Path):
    folder = night_copy(root, "pubout")
    (folder / "llm").mkdir()
    (folder / "llm" / "prompt.txt").write_text(f"system prompt {SECRET}")
    (folder / "notes.html").write_text(f"<p>{SECRET}</p>")
    (folder / "linked.ndjson").symlink_to(root / "outside" / "m.ndjson")
    (folder / "golf" / "linked.json").symlink_to(root / "outside" / "golf.json")
    os.mkfifo(folder / "fifo-m.ndjson")
    site = tmp_path / "site"
    run = publish(root, "pubout", site)
    assert run.returncode == 0, run.stderr
    files = sorted(str(p.relative_to(site)) for p in site.rglob("*") if p.is_file())
    matches = sorted(f"matches/{p.stem}.html" for p in folder.glob("hostile-*.ndjson"))
    assert files == sorted([".cogolf-site", "index.html", "standings.json",
                            "static/night.css", "static/style.css", *matches])  # fmt: skip
    for p in site.rglob("*"):
        if p.is_file():
            text = p.read_text()
            assert SECRET not in text, p
            assert not re.search(r"""(?:href|src|action)=["']?(?:/|(?!data:)[a-z]+:)""", text), p
            assert 'http-equiv="Content-Security-Policy"' in text or p.suffix != ".html", p
            # self-contained: nothing loaded, no script but the page's own hashed one
            if p.parent.name == "matches":
                assert "<script src" not in text and 'rel="stylesheet"' not in text, p
    assert "<script" not in (site / "index.html").read_text()


def test_publish_never_writes_through_links_planted_in_the_site(root: Path, tmp_path: Path):
    night_copy(root, "pubsite")
    victim = tmp_path / "victim"
    victim.mkdir()
    (victim / "keep.txt").write_text("keep")
    for planted in ("index.html", "standings.json", ".cogolf-site", "static", "matches"):
        site = tmp_path / f"site-{planted.strip('.')}"
        assert publish(root, "pubsite", site).returncode == 0
        target = site / planted
        if target.is_dir():
            shutil.rmtree(target)
            target.symlink_to(victim, target_is_directory=True)
        else:
            target.unlink()
            target.symlink_to(victim / "keep.txt")
        run = publish(root, "pubsite", site)
        assert "Traceback" not in run.stderr, run.stderr
        assert sorted(p.name for p in victim.iterdir()) == ["keep.txt"], planted
        assert (victim / "keep.txt").read_text() == "keep", planted
        if run.returncode == 0:
            assert not (site / planted).is_symlink(), planted
        else:
            assert run.returncode == 2 and "link" in run.stderr, run.stderr


def test_publish_refuses_an_out_folder_that_is_a_link(root: Path, tmp_path: Path):
    night_copy(root, "publink")
    real = tmp_path / "real-site"
    real.mkdir()
    (tmp_path / "site").symlink_to(real, target_is_directory=True)
    run = publish(root, "publink", tmp_path / "site")
    assert run.returncode == 2 and "symbolic link" in run.stderr, run.stderr
    assert list(real.iterdir()) == []


def test_publish_refuses_a_night_folder_that_is_a_link(root: Path, tmp_path: Path):
    """Its files would all lie outside the folder named: a site without matches, silently."""
    night_copy(root, "pubnight")
    link = tmp_path / "pubnight"
    link.symlink_to(root / "replays" / "pubnight", target_is_directory=True)
    run = cogolf("league", "publish", str(link), "--out", str(tmp_path / "site"),
                 "--league-dir", str(root / "league"), cwd=root)  # fmt: skip
    assert run.returncode == 2 and "symbolic link" in run.stderr, run.stderr
    assert not (tmp_path / "site").exists()


def test_the_runner_never_writes_progress_through_a_planted_link(tmp_path: Path):
    """The runner's temporary progress file has a predictable name (its pid): a link
    planted there is replaced, its target left as it was."""
    from cogolf.league.progress import Progress
    from cogolf.league.progress_file import write_progress

    victim = tmp_path / "victim.txt"
    victim.write_text("keep")
    folder = tmp_path / "night"
    folder.mkdir()
    (folder / f".progress.json.{os.getpid()}.tmp").symlink_to(victim)
    progress = Progress(4, open(os.devnull, "w"), tty=False)  # noqa: SIM115
    write_progress(folder, "night", progress, "matches", 0)
    assert victim.read_text() == "keep"
    assert json.loads((folder / "progress.json").read_text())["state"] == "matches"
    assert not (folder / "progress.json").is_symlink()
