"""Finding the language toolchains, in places an unprivileged uid can use.

Submissions run as a throwaway uid, so every interpreter and compiler they use
must be reachable by "other" through each parent directory. A Rust toolchain
installed under a private home is mirrored (hard links, or copies across file
systems) into a cache directory we own; the compiled Racket harness lives there
too. Every missing piece is a `ToolchainError` that says what to install.
"""

from __future__ import annotations

import hashlib
import os
import shutil
import stat
import subprocess
import sys
import tempfile
from dataclasses import dataclass
from pathlib import Path

import structlog

log = structlog.get_logger(__name__)

CACHE_ENV = "COGOLF_GOLF_CACHE"


class ToolchainError(RuntimeError):
    """A language toolchain is missing or unusable; the message says what to do."""


def world_usable(path: Path) -> bool:
    """True when "other" can reach `path` (after symlinks) and read it."""
    try:
        real = path.resolve(strict=True)
    except OSError:
        return False
    for parent in real.parents:
        if not os.stat(parent).st_mode & stat.S_IXOTH:
            return False
    return bool(os.stat(real).st_mode & stat.S_IROTH)


def cache_root() -> Path:
    """A directory we own that others may read but not write."""
    default = Path(tempfile.gettempdir()) / f"cogolf-golf-{os.getuid()}"
    base = Path(os.environ.get(CACHE_ENV) or default)
    base.mkdir(mode=0o755, parents=True, exist_ok=True)
    st = os.lstat(base)
    if not stat.S_ISDIR(st.st_mode) or st.st_uid != os.getuid() or st.st_mode & 0o022:
        raise ToolchainError(f"{base}: cache directory must be ours and not group/other-writable")
    os.chmod(base, 0o755)
    if not world_usable(base):
        raise ToolchainError(
            f"{base}: cache directory is not reachable by other users; set {CACHE_ENV}"
        )
    return base


def python_interpreter() -> Path:
    """The Python that runs Python submissions: ours when usable by others, else the system's."""
    candidates = [Path(sys.executable), Path("/usr/bin/python3"), Path("/usr/local/bin/python3")]
    for c in candidates:
        if world_usable(c):
            return c
    raise ToolchainError("no Python interpreter usable by an unprivileged uid")


def racket_binary() -> Path:
    found = shutil.which("racket")
    if not found:
        raise ToolchainError("racket is not installed (Debian: apt-get install racket)")
    path = Path(found)
    if not world_usable(path):
        raise ToolchainError(f"{path} is not usable by an unprivileged uid")
    return path


def racket_harness(source: Path) -> Path:
    """The Racket child harness compiled once into the cache (start-up is the cost)."""
    racket = racket_binary()
    digest = hashlib.sha256(source.read_bytes() + str(racket.resolve()).encode()).hexdigest()[:16]
    folder = cache_root() / f"racket-{digest}"
    target = folder / "harness.rkt"
    if not (folder / "compiled" / "harness_rkt.zo").exists():
        tmp = Path(tempfile.mkdtemp(prefix="racket-", dir=cache_root()))
        shutil.copyfile(source, tmp / "harness.rkt")
        raco = racket.parent / "raco"
        proc = subprocess.run(
            [str(raco), "make", str(tmp / "harness.rkt")], capture_output=True, timeout=120
        )
        if proc.returncode != 0:
            raise ToolchainError(f"raco make failed: {proc.stderr.decode(errors='replace')[:500]}")
        _publish(tmp, folder)
    return target


@dataclass(frozen=True)
class Rust:
    rustc: Path
    sysroot: Path
    version: str


def _find_rustc() -> Path:
    found = shutil.which("rustc") or str(Path.home() / ".cargo" / "bin" / "rustc")
    if not Path(found).exists():
        raise ToolchainError("rustc is not installed (https://rustup.rs or apt-get install rustc)")
    return Path(found)


def rust_toolchain() -> Rust:
    """A rustc whose sysroot an unprivileged uid can read, mirroring it when needed."""
    rustc = _find_rustc()
    try:
        sysroot = Path(
            subprocess.run(
                [str(rustc), "--print", "sysroot"], capture_output=True, text=True, check=True,
                timeout=60,
            ).stdout.strip()
        )
        version = subprocess.run(
            [str(rustc), "--version"], capture_output=True, text=True, check=True, timeout=60
        ).stdout.strip()
    except (OSError, subprocess.SubprocessError) as exc:
        raise ToolchainError(f"{rustc}: cannot ask for its sysroot ({exc})") from exc
    real = sysroot / "bin" / "rustc"
    if world_usable(real) and world_usable(sysroot / "lib"):
        return Rust(real, sysroot, version)
    digest = hashlib.sha256(f"{sysroot}|{version}".encode()).hexdigest()[:16]
    mirror = cache_root() / f"rust-{digest}"
    if not (mirror / "bin" / "rustc").exists():
        log.info("golf.rust_mirror", source=str(sysroot), target=str(mirror))
        tmp = Path(tempfile.mkdtemp(prefix="rust-", dir=cache_root()))
        _mirror_tree(sysroot / "bin", tmp / "bin", only=("rustc",))
        _mirror_tree(sysroot / "lib", tmp / "lib")
        _publish(tmp, mirror)
    return Rust(mirror / "bin" / "rustc", mirror, version)


def _mirror_tree(src: Path, dst: Path, only: tuple[str, ...] = ()) -> None:
    skip = {"src", "etc", "share", "doc", "rust-analyzer-proc-macro-srv"}
    for root, dirs, files in os.walk(src):
        dirs[:] = [d for d in dirs if d not in skip]
        rel = Path(root).relative_to(src)
        (dst / rel).mkdir(mode=0o755, parents=True, exist_ok=True)
        for name in files:
            if only and rel == Path(".") and name not in only:
                continue
            s, d = Path(root) / name, dst / rel / name
            if s.is_symlink():
                os.symlink(os.readlink(s), d)
                continue
            try:
                os.link(s, d)
            except OSError:
                shutil.copy2(s, d)
            if not os.stat(d).st_mode & stat.S_IROTH:
                os.chmod(d, os.stat(d).st_mode | 0o444)
    for root, dirs, _files in os.walk(dst):
        for d in dirs:
            os.chmod(Path(root) / d, 0o755)
    os.chmod(dst, 0o755)


def _publish(tmp: Path, final: Path) -> None:
    """Make a finished cache entry visible atomically (a concurrent builder may win)."""
    os.chmod(tmp, 0o755)
    try:
        os.rename(tmp, final)
    except OSError:
        shutil.rmtree(tmp, ignore_errors=True)
        if not final.exists():
            raise
