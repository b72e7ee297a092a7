"""Stubbing keeps signatures, decorators, docstrings and module-level code."""

from __future__ import annotations

import ast

import pytest

from cogolf.games.commit0.stubber import stub_marker, stub_source

SOURCE = '''
"""Module doc."""
import functools

LIMIT = 3


def plain(a: int, *, b: str = "x") -> int:
    """Add things."""
    return a + len(b)


@functools.lru_cache(maxsize=None)
async def fetch(url):
    def helper():
        return 1
    return helper()


class Box:
    """A box."""

    size = LIMIT

    @property
    def area(self) -> int:
        return self.size ** 2

    class Inner:
        def deep(self):
            return "deep"
'''


def test_every_body_is_stubbed_with_a_named_marker() -> None:
    result = stub_source(SOURCE, "pkg.mod")
    assert result.stubbed == ["plain", "fetch", "Box.area", "Box.Inner.deep"]
    tree = ast.parse(result.source)
    plain = next(n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "plain")
    assert ast.get_docstring(plain) == "Add things."
    assert ast.unparse(plain.args) == "a: int, *, b: str='x'"
    assert ast.unparse(plain.returns) == "int"
    assert stub_marker("pkg.mod", "Box.Inner.deep") in result.source
    assert "return" not in result.source  # nested helper gone with its parent's body
    assert "@functools.lru_cache(maxsize=None)" in result.source
    assert "LIMIT = 3" in result.source and "size = LIMIT" in result.source


def test_stubs_raise_not_implemented_with_the_marker() -> None:
    namespace: dict[str, object] = {}
    exec(compile(stub_source(SOURCE, "pkg.mod").source, "<stub>", "exec"), namespace)
    with pytest.raises(NotImplementedError, match=r"cogolf-stub: pkg\.mod:plain"):
        namespace["plain"](1)  # type: ignore[operator]
    box = namespace["Box"]()  # type: ignore[operator]
    with pytest.raises(NotImplementedError, match=r"Box\.area"):
        _ = box.area


def test_kept_functions_stay_whole() -> None:
    result = stub_source(SOURCE, "pkg.mod", frozenset({"plain", "Box.area"}))
    assert result.stubbed == ["fetch", "Box.Inner.deep"]
    assert "return a + len(b)" in result.source


def test_syntax_errors_surface() -> None:
    with pytest.raises(SyntaxError):
        stub_source("def broken(:\n", "m")
