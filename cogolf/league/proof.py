"""What a night can prove: replays that verify, solo results its runner signed.

Anyone who can write a night's folder can edit a replay's result lines or a solo
result file. The standings therefore count a Cogolf replay only once it verifies
(every hole re-resolved, `replay_check`), and a solo result only when its
signature checks: an HMAC-SHA256, with the night's key, of the file's path in
the folder and its bytes, kept beside it as `<file>.sig`. Everything else is a
problem with its reason and is not counted.

The key (`.key`, 32 random bytes) is made by the first `league run` of a night,
mode 0600 in the night's folder, which is itself 0700: bots run as other uids
and cannot read either. It is never logged or written into a result.

The night's plan (`planfile`) carries its own signature, made with the same key.

Verdicts on replays are cached in `.proofs`, keyed by the replay's name and
sha256 and the verifier's version, each entry signed with the key: a forged or
stale entry is ignored and the replay verified again.
"""

from __future__ import annotations

import hashlib
import hmac
import json
import os
import secrets
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

KEY_NAME = ".key"
CACHE_NAME = ".proofs"
SIG_SUFFIX = ".sig"
KEY_BYTES = 32
MAX_CACHE_BYTES = 16 * 1024 * 1024
MAX_SIG_BYTES = 256


def night_key(night_dir: Path, *, create: bool = False) -> bytes | None:
    """The night's key; made (0600) when `create` and there is none yet."""
    path = Path(night_dir) / KEY_NAME
    try:
        with open(path, "rb") as f:
            key = f.read(KEY_BYTES + 1)
        if len(key) == KEY_BYTES:
            return key
    except FileNotFoundError:
        pass
    except OSError:
        return None
    if not create:
        return None
    key = secrets.token_bytes(KEY_BYTES)
    tmp = path.with_name(f"{KEY_NAME}.{os.getpid()}.tmp")
    fd = os.open(tmp, os.O_WRONLY | os.O_CREAT | os.O_TRUNC | os.O_CLOEXEC, 0o600)
    with os.fdopen(fd, "wb") as f:
        f.write(key)
    tmp.replace(path)
    return key


def _mac(key: bytes, *parts: bytes) -> str:
    h = hmac.new(key, digestmod=hashlib.sha256)
    for part in parts:
        h.update(len(part).to_bytes(8, "big"))  # lengths first: no two inputs read alike
        h.update(part)
    return h.hexdigest()


def _same(given: str | bytes, expected: str) -> bool:
    """Constant-time comparison that any bytes or text from a file may be given to."""
    raw = given if isinstance(given, bytes) else given.encode("utf-8", "surrogatepass")
    return hmac.compare_digest(raw, expected.encode())


def mac_of(key: bytes, purpose: bytes, data: bytes) -> str:
    """The night's signature of `data` for one `purpose` (no two purposes' signatures agree)."""
    return _mac(key, purpose, data)


def signed(key: bytes, purpose: bytes, data: bytes, mac: str) -> bool:
    return _same(mac, _mac(key, purpose, data))


def _rel(night_dir: Path, path: Path) -> str:
    return Path(path).relative_to(night_dir).as_posix()


def sign_file(key: bytes, night_dir: Path, path: Path) -> None:
    """Sign a result file the runner has just written."""
    mac = _mac(key, b"solo", _rel(night_dir, path).encode(), Path(path).read_bytes())
    sig = Path(f"{path}{SIG_SUFFIX}")
    tmp = sig.with_name(f".{sig.name}.{os.getpid()}.tmp")
    tmp.write_text(mac + "\n")
    tmp.replace(sig)


def unsigned_reason(key: bytes | None, night_dir: Path, path: Path) -> str | None:
    """Why the file at `path` is not a result the night's runner signed; None when it is."""
    if key is None:
        return "not signed by this night's runner (the folder has no night key)"
    try:
        with open(f"{path}{SIG_SUFFIX}", "rb") as f:
            sig = f.read(MAX_SIG_BYTES).strip()
    except OSError:
        return "not signed by this night's runner (no signature)"
    try:
        data = Path(path).read_bytes()
    except OSError as exc:
        return f"cannot read ({exc.strerror})"
    if not _same(sig, _mac(key, b"solo", _rel(night_dir, path).encode(), data)):
        return "the signature does not match: edited after the runner wrote it"
    return None


def digest(path: Path) -> str:
    h = hashlib.sha256()
    with open(path, "rb") as f:
        while chunk := f.read(1 << 20):
            h.update(chunk)
    return h.hexdigest()


@dataclass
class ProofCache:
    """Signed verdicts on replays: name -> (sha256, verifier, reason or "")."""

    key: bytes
    path: Path
    entries: dict[str, dict[str, str]] = field(default_factory=dict)
    changed: bool = False

    @classmethod
    def load(cls, key: bytes, night_dir: Path) -> ProofCache:
        cache = cls(key, Path(night_dir) / CACHE_NAME)
        try:
            with open(cache.path, "rb") as f:
                raw: Any = json.loads(f.read(MAX_CACHE_BYTES))
        except (OSError, ValueError, RecursionError):
            return cache  # no cache, or a broken one: everything is verified again
        if isinstance(raw, dict):
            for name, entry in raw.items():
                if isinstance(entry, dict) and all(isinstance(v, str) for v in entry.values()):
                    cache.entries[name] = entry
        return cache

    def _entry_mac(self, name: str, sha: str, verifier: str, reason: str) -> str:
        return _mac(
            self.key, b"proof", name.encode(), sha.encode(), verifier.encode(), reason.encode()
        )

    def get(self, name: str, sha: str, verifier: str) -> str | None:
        """The cached reason ("" when it verified), or None when there is no valid entry."""
        e = self.entries.get(name)
        if e is None or e.get("sha256") != sha or e.get("verifier") != verifier:
            return None
        reason = e.get("reason", "")
        if not _same(e.get("mac", ""), self._entry_mac(name, sha, verifier, reason)):
            return None
        return reason

    def put(self, name: str, sha: str, verifier: str, reason: str) -> None:
        entry = {
            "sha256": sha,
            "verifier": verifier,
            "reason": reason,
            "mac": self._entry_mac(name, sha, verifier, reason),
        }
        if self.entries.get(name) != entry:
            self.entries[name] = entry
            self.changed = True

    def save(self) -> None:
        if not self.changed:
            return
        tmp = self.path.with_name(f"{CACHE_NAME}.{os.getpid()}.tmp")
        tmp.write_text(json.dumps(self.entries, indent=1, sort_keys=True) + "\n")
        tmp.replace(self.path)
        self.changed = False


@dataclass(frozen=True)
class Checks:
    """How `league standings` re-proves replays: the pack they were played with, the sandbox."""

    deck: Any  # cogolf.deck.Deck
    sandbox_mode: str = "fork"
    accept_weak_sandbox: bool = False
    parallel: int = 1


class VerifyUnavailable(RuntimeError):
    """Replays wait to be verified but no sandbox can start."""


async def prove_replays(records: Any, night_dir: Path, key: bytes, checks: Checks) -> Any:
    """`records` (NightRecords) with only the played replays that verify; the others are
    problems with their first divergence. Verdicts come from the signed cache when the
    file's digest and the verifier are the same."""
    import asyncio

    from cogolf.league.replay_check import VERIFIER, verify_file

    cache = ProofCache.load(key, night_dir)
    verdicts: dict[str, str] = {}
    todo: list[tuple[str, str]] = []
    for p in records.played:
        try:
            sha = digest(Path(night_dir) / p.source)
        except OSError as exc:
            verdicts[p.source] = f"cannot read ({exc.strerror})"
            continue
        cached = cache.get(p.source, sha, VERIFIER)
        if cached is None:
            todo.append((p.source, sha))
        else:
            verdicts[p.source] = cached
    if todo:
        from cogolf.sandbox import make_sandbox

        sandbox = make_sandbox(checks.sandbox_mode, accept_weak=checks.accept_weak_sandbox)
        try:
            await sandbox.start()
        except Exception as exc:  # whatever stops the sandbox stops the standings
            raise VerifyUnavailable(
                f"cannot verify the replays: the sandbox cannot start: {exc}"
            ) from exc
        gate = asyncio.Semaphore(max(1, checks.parallel))

        async def one(name: str) -> str:
            async with gate:
                try:
                    return await verify_file(Path(night_dir) / name, checks.deck, sandbox)
                except Exception as exc:  # a hostile replay is a problem, never a crash
                    return f"cannot verify: {type(exc).__name__}"

        try:
            found = await asyncio.gather(*(one(name) for name, _ in todo))
        finally:
            await sandbox.close()
        for (name, sha), reason in zip(todo, found, strict=True):
            cache.put(name, sha, VERIFIER, reason)
            verdicts[name] = reason
    cache.save()
    kept = [p for p in records.played if verdicts.get(p.source) == ""]
    records.problems.extend(
        f"{p.source}: does not verify, not counted: {verdicts[p.source]}"
        for p in records.played
        if verdicts.get(p.source) != ""
    )
    records.problems.sort()
    records.played = kept
    return records


def remember_played(key: bytes, night_dir: Path, names: list[str]) -> None:
    """Cache as proved the replays this night's runner has just played or re-verified."""
    from cogolf.league.replay_check import VERIFIER

    cache = ProofCache.load(key, night_dir)
    for name in names:
        try:
            cache.put(name, digest(Path(night_dir) / name), VERIFIER, "")
        except OSError:
            continue
    cache.save()
