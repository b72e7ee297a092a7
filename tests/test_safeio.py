"""The one reader of files someone else controls: links refused, sizes checked first."""

from __future__ import annotations

import os
from pathlib import Path

import pytest

from cogolf import safeio


def tree(tmp_path: Path) -> Path:
    top = tmp_path / "top"
    (top / "pkg" / "sub").mkdir(parents=True)
    (top / "pkg" / "a.py").write_text("a = 1\n")
    (top / "pkg" / "sub" / "b.py").write_text("b = 2\n")
    (top / "pkg" / "__pycache__").mkdir()
    (top / "pkg" / "__pycache__" / "a.pyc").write_bytes(b"\0")
    return top


def test_copy_tree_copies_files_and_skips_ignored(tmp_path: Path) -> None:
    top = tree(tmp_path)
    n = safeio.copy_tree(top, tmp_path / "out", max_files=10, max_bytes=100,
                         ignore=lambda name: name == "__pycache__")
    assert n == 2 and (tmp_path / "out" / "pkg" / "sub" / "b.py").read_text() == "b = 2\n"
    assert not (tmp_path / "out" / "pkg" / "__pycache__").exists()


@pytest.mark.parametrize("where", ["pkg/sub/link.py", "pkg/linkdir", "pkg"])
def test_copy_tree_refuses_a_link_anywhere_and_names_it(tmp_path: Path, where: str) -> None:
    top = tree(tmp_path)
    target = top / where
    if where == "pkg":
        os.rename(target, tmp_path / "moved")
        target.symlink_to(tmp_path / "moved")
    else:
        target.symlink_to("/etc")
    with pytest.raises(safeio.UnsafeFile, match="symbolic link") as info:
        safeio.copy_tree(top, tmp_path / "out", max_files=10, max_bytes=100)
    assert where in str(info.value)


def test_copy_tree_refuses_special_files_and_caps(tmp_path: Path) -> None:
    top = tree(tmp_path)
    with pytest.raises(safeio.UnsafeFile, match="more than 1 files"):
        safeio.copy_tree(top, tmp_path / "o1", max_files=1, max_bytes=100)
    with pytest.raises(safeio.UnsafeFile, match="more than 8 bytes in total"):
        safeio.copy_tree(top, tmp_path / "o2", max_files=10, max_bytes=8)
    os.mkfifo(top / "pkg" / "fifo")
    with pytest.raises(safeio.UnsafeFile, match="pkg/fifo: not a regular file"):
        safeio.copy_tree(top, tmp_path / "o3", max_files=10, max_bytes=100)


def test_copy_tree_below_top_refuses_a_linked_component(tmp_path: Path) -> None:
    top = tmp_path / "sub"
    top.mkdir()
    (top / "src").symlink_to(tree(tmp_path))
    with pytest.raises(safeio.UnsafeFile, match="src: a symbolic link"):
        safeio.copy_tree("src/pkg", tmp_path / "out", max_files=10, max_bytes=100, top=top)


def test_read_file_below_top_and_kinds(tmp_path: Path) -> None:
    top = tree(tmp_path)
    assert safeio.read_file("pkg/a.py", 10, top=top) == b"a = 1\n"
    (top / "link").symlink_to(top / "pkg")
    with pytest.raises(safeio.UnsafeFile, match="link: a symbolic link"):
        safeio.read_file("link/a.py", 10, top=top)
    with pytest.raises(safeio.UnsafeFile, match="not a plain relative path"):
        safeio.read_file("../top/pkg/a.py", 10, top=top)
    assert safeio.entry_kind(top, "link") == "link"
    assert safeio.entry_kind(top, "pkg") == "dir"
    assert safeio.entry_kind(top, "pkg/a.py") == "file"
    assert safeio.entry_kind(top, "nothing") is None
    with pytest.raises(safeio.UnsafeFile, match="symbolic link"):
        safeio.open_dir_check(top / "link")


def test_check_no_links_walks_below_the_base_only(tmp_path: Path) -> None:
    base = tmp_path / "night"
    (base / "subs").mkdir(parents=True)
    (base / "subs" / "bob").symlink_to(tmp_path)
    safeio.check_no_links(base, base / "subs" / "alice" / "python")  # absent: nothing to refuse
    with pytest.raises(safeio.UnsafeFile, match="subs/bob: a symbolic link"):
        safeio.check_no_links(base, base / "subs" / "bob" / "python")
