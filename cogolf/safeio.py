"""Reading files that someone else controls: no link followed, no size trusted.

A submission folder or a report is written by the player or the program under
test. A symbolic link in it could point the scorer (running as root) at the
reference solutions or at `/etc/shadow`, and a huge file would be read whole
before any cap applied. So every such read goes through this module:

- every path component below a trusted top is opened relative to its parent's
  descriptor with O_NOFOLLOW, so a link anywhere in the path is refused (named),
  not followed, and nothing can swap a component between check and use;
- a file must be a regular file (O_NONBLOCK: a FIFO cannot stall the open), its
  size is checked with fstat before reading, and at most cap + 1 bytes are read;
- `copy_tree` copies a folder the same way, refusing any link or special file.
"""

from __future__ import annotations

import contextlib
import errno
import os
import stat
from collections.abc import Callable, Iterator
from pathlib import Path

_DIR_FLAGS = os.O_RDONLY | os.O_DIRECTORY | os.O_NOFOLLOW | os.O_CLOEXEC
_FILE_FLAGS = os.O_RDONLY | os.O_NOFOLLOW | os.O_NONBLOCK | os.O_CLOEXEC
_CHUNK = 1 << 16


class UnsafeFile(ValueError):
    """A file that is refused (a link, not a regular file, too large); names the path."""


class TooLarge(UnsafeFile):
    """A file over its size cap; read no further than cap + 1 bytes."""

    def __init__(self, path: str | Path, size: int, cap: int) -> None:
        super().__init__(f"{path}: file is too large ({size} bytes, the limit is {cap})")
        self.path, self.size, self.cap = str(path), size, cap


def _refuse(path: str | Path, err: OSError) -> UnsafeFile | OSError:
    """ELOOP / ENOTDIR from O_NOFOLLOW mean a link; anything else stays an OSError."""
    with contextlib.suppress(OSError):
        if stat.S_ISLNK(os.lstat(path).st_mode):
            return UnsafeFile(f"{path}: a symbolic link; symbolic links are never followed")
    if err.errno in (errno.ELOOP, errno.ENOTDIR):
        return UnsafeFile(f"{path}: a symbolic link or not a directory; refused")
    return err


def open_dir(path: str | Path) -> int:
    """A descriptor for the directory `path`; its last component must not be a link
    (the components above it are the operator's and resolve as usual)."""
    try:
        return os.open(path, _DIR_FLAGS)
    except OSError as exc:
        raise _refuse(path, exc) from exc


def _open_below(top: int, rel: str, label: str, flags: int) -> int:
    """Open `rel` (relative, no '..') below the directory descriptor `top`, component by
    component with O_NOFOLLOW. The caller closes the result."""
    parts = [p for p in Path(rel).parts if p not in ("", ".")]
    if not parts or any(p == ".." or p.startswith("/") for p in parts):
        raise UnsafeFile(f"{label}: not a plain relative path")
    fd = os.dup(top)
    try:
        for i, part in enumerate(parts):
            last = i == len(parts) - 1
            here = "/".join([label.rstrip("/"), *parts[: i + 1]] if label else parts[: i + 1])
            try:
                nxt = os.open(part, flags if last else _DIR_FLAGS, dir_fd=fd)
            except OSError as exc:
                raise _classify(fd, part, here, exc) from exc
            os.close(fd)
            fd = nxt
        return fd
    except BaseException:
        os.close(fd)
        raise


def _classify(dir_fd: int, name: str, here: str, err: OSError) -> UnsafeFile | OSError:
    try:
        mode = os.stat(name, dir_fd=dir_fd, follow_symlinks=False).st_mode
    except OSError:
        return err
    if stat.S_ISLNK(mode):
        return UnsafeFile(f"{here}: a symbolic link; symbolic links are never followed")
    if err.errno == errno.ENOTDIR:
        return UnsafeFile(f"{here}: not a directory")
    return err


def read_fd(fd: int, cap: int, label: str | Path, *, single_link: bool = False) -> bytes:
    """At most `cap` bytes of the regular file open on `fd`; TooLarge past it.
    `single_link`: refuse a file with other hard links (a name for someone else's file)."""
    info = os.fstat(fd)
    if not stat.S_ISREG(info.st_mode):
        raise UnsafeFile(f"{label}: not a regular file")
    if single_link and info.st_nlink > 1:
        raise UnsafeFile(f"{label}: has {info.st_nlink} hard links; refused")
    if info.st_size > cap:
        raise TooLarge(label, info.st_size, cap)
    os.set_blocking(fd, True)
    chunks: list[bytes] = []
    got = 0
    while got <= cap:
        chunk = os.read(fd, min(_CHUNK, cap + 1 - got))
        if not chunk:
            break
        chunks.append(chunk)
        got += len(chunk)
    if got > cap:  # it grew after fstat
        raise TooLarge(label, got, cap)
    return b"".join(chunks)


def _open_path(path: str | Path, top: str | Path | None) -> int:
    """A descriptor for `path` that never went through a link: with `top`, no
    component below `top`; without, the last component (O_NOFOLLOW)."""
    if top is None:
        try:
            return os.open(path, _FILE_FLAGS)
        except OSError as exc:
            raise _refuse(path, exc) from exc
    dir_fd = open_dir(top)
    try:
        return _open_below(dir_fd, str(path), str(top), _FILE_FLAGS)
    finally:
        os.close(dir_fd)


def read_file(
    path: str | Path, cap: int, *, top: str | Path | None = None, single_link: bool = False
) -> bytes:
    """The bytes of `path`, refusing links and files over `cap`.

    With `top`, `path` is relative to it and no component below `top` may be a link;
    without, only the last component is checked (O_NOFOLLOW)."""
    fd = _open_path(path, top)
    try:
        return read_fd(fd, cap, path if top is None else Path(top) / path, single_link=single_link)
    finally:
        os.close(fd)


def entry_kind(top: str | Path, rel: str) -> str | None:
    """"file", "dir", "link", "other" for `rel` below `top` (no link followed on the
    way), or None when it does not exist."""
    dir_fd = open_dir(top)
    try:
        parts = Path(rel).parts
        parent = dir_fd
        if len(parts) > 1:
            parent = _open_below(dir_fd, str(Path(*parts[:-1])), str(top), _DIR_FLAGS)
        try:
            mode = os.stat(parts[-1], dir_fd=parent, follow_symlinks=False).st_mode
        except FileNotFoundError:
            return None
        finally:
            if parent != dir_fd:
                os.close(parent)
    finally:
        os.close(dir_fd)
    if stat.S_ISLNK(mode):
        return "link"
    if stat.S_ISDIR(mode):
        return "dir"
    return "file" if stat.S_ISREG(mode) else "other"


def _walk(fd: int, label: str, ignore: Callable[[str], bool]) -> Iterator[tuple[str, str, int]]:
    """(relative path, kind, descriptor of its parent) for everything below `fd`,
    depth first; raises UnsafeFile on a link or a special file."""
    with os.scandir(fd) as it:
        entries = sorted(it, key=lambda e: e.name)
    for entry in entries:
        if ignore(entry.name):
            continue
        here = f"{label}/{entry.name}"
        if entry.is_symlink():
            raise UnsafeFile(f"{here}: a symbolic link; symbolic links are never followed")
        if entry.is_dir(follow_symlinks=False):
            yield entry.name, "dir", fd
            sub = _open_below(fd, entry.name, label, _DIR_FLAGS)
            try:
                for rel, kind, parent in _walk(sub, here, ignore):
                    yield f"{entry.name}/{rel}", kind, parent
            finally:
                os.close(sub)
        elif entry.is_file(follow_symlinks=False):
            yield entry.name, "file", fd
        else:
            raise UnsafeFile(f"{here}: not a regular file or directory")


def copy_tree(
    src: str | Path,
    dst: str | Path,
    *,
    max_files: int,
    max_bytes: int,
    ignore: Callable[[str], bool] = lambda name: False,
    label: str | None = None,
    top: str | Path | None = None,
) -> int:
    """Copy the folder `src` (or one regular file) to `dst`, refusing links anywhere
    (`src` itself included, and with `top` every component of `src` below `top`),
    special files and more than `max_files` files or `max_bytes` bytes in total.
    Returns the number of files copied. Error messages name paths from `label`."""
    name = label if label is not None else str(src)
    top_fd = _open_path(src, top)
    return _copy_open(top_fd, Path(dst), name, max_files, max_bytes, ignore)


def _copy_open(
    top: int, dst: Path, name: str, max_files: int, max_bytes: int,
    ignore: Callable[[str], bool],
) -> int:
    try:
        if stat.S_ISREG(os.fstat(top).st_mode):
            _copy_fd(top, dst, name, max_bytes)
            return 1
        if not stat.S_ISDIR(os.fstat(top).st_mode):
            raise UnsafeFile(f"{name}: not a regular file or directory")
        dst.mkdir(parents=True, exist_ok=True)
        files = total = 0
        for rel, kind, parent in _walk(top, name, ignore):
            target = dst / rel
            if kind == "dir":
                target.mkdir(exist_ok=True)
                continue
            files += 1
            if files > max_files:
                raise UnsafeFile(f"{name}: more than {max_files} files")
            fd = _open_below(parent, Path(rel).name, str(Path(name, rel).parent), _FILE_FLAGS)
            try:
                total += _copy_fd(fd, target, f"{name}/{rel}", max_bytes - total)
            except TooLarge as exc:
                raise UnsafeFile(f"{name}: more than {max_bytes} bytes in total") from exc
            finally:
                os.close(fd)
        return files
    finally:
        os.close(top)


def _copy_fd(fd: int, target: Path, label: str, room: int) -> int:
    data = read_fd(fd, max(room, 0), label)
    target.write_bytes(data)
    return len(data)


def check_no_links(base: str | Path, path: str | Path) -> None:
    """Refuse `path` when any of its components below the trusted folder `base` is a
    symbolic link (e.g. a submission path made from a night file's template)."""
    full, top = Path(os.path.abspath(path)), Path(os.path.abspath(base))
    if not full.is_relative_to(top):  # an absolute template: only its last part is checked
        top = full.parent
    rel = full.relative_to(top)
    here = top
    for part in rel.parts:
        here = here / part
        try:
            mode = os.lstat(here).st_mode
        except FileNotFoundError:
            return
        if stat.S_ISLNK(mode):
            raise UnsafeFile(f"{here}: a symbolic link; symbolic links are never followed")


def open_dir_check(path: str | Path) -> None:
    """Raise unless `path` is a directory that is not itself a link."""
    os.close(open_dir(path))


def list_dir(top: str | Path, rel: str) -> list[str]:
    """Names in the folder `rel` below `top`, reached without following a link."""
    dir_fd = open_dir(top)
    try:
        sub = _open_below(dir_fd, rel, str(top), _DIR_FLAGS)
    finally:
        os.close(dir_fd)
    try:
        return os.listdir(sub)
    finally:
        os.close(sub)
