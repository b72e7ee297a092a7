"""The small type language of golf signatures, and its rendering per language.

A hole states its parameter and return types once (`str`, `int`, `bool`,
`list[T]`, `nest`); every course derives its prompt signature and, for Rust, the
literal syntax of test arguments and the conversion of results from it, so the
three contracts cannot drift apart.
"""

from __future__ import annotations

import json
from dataclasses import dataclass
from typing import Any

SCALARS = ("str", "int", "bool")
NEST = "nest"  # a list whose elements are ints or, recursively, such lists

I64_MIN = -(2**63)
I64_MAX = 2**63 - 1


class TypeSyntaxError(ValueError):
    """A type string outside the grammar."""


@dataclass(frozen=True)
class GolfType:
    kind: str  # "str" | "int" | "bool" | "list" | "nest"
    item: GolfType | None = None

    def __str__(self) -> str:
        return f"list[{self.item}]" if self.kind == "list" else self.kind


def parse_type(text: str) -> GolfType:
    text = text.strip()
    if text in SCALARS or text == NEST:
        return GolfType(text)
    if text.startswith("list[") and text.endswith("]"):
        return GolfType("list", parse_type(text[5:-1]))
    raise TypeSyntaxError(f"unknown type {text!r} (use str, int, bool, nest or list[T])")


def check_value(t: GolfType, v: Any, path: str = "$") -> str | None:
    """Return why `v` is not of type `t`, or None when it is."""
    if t.kind == "str":
        return None if type(v) is str else f"{path}: expected a string"
    if t.kind == "int":
        if type(v) is not int:
            return f"{path}: expected an integer"
        return None if I64_MIN <= v <= I64_MAX else f"{path}: integer outside signed 64 bits"
    if t.kind == "bool":
        return None if type(v) is bool else f"{path}: expected a boolean"
    if type(v) is not list:
        return f"{path}: expected a list"
    for i, item in enumerate(v):
        if t.kind == "nest" and type(item) is list:
            why = check_value(t, item, f"{path}[{i}]")
        else:
            item_type = GolfType("int") if t.kind == "nest" else t.item
            assert item_type is not None
            why = check_value(item_type, item, f"{path}[{i}]")
        if why:
            return why
    return None


# ---- Python ---------------------------------------------------------------

def python_type(t: GolfType) -> str:
    if t.kind == "list":
        assert t.item is not None
        return f"list[{python_type(t.item)}]"
    return "list[int | list]" if t.kind == "nest" else t.kind


# ---- Racket ---------------------------------------------------------------

def racket_type(t: GolfType) -> str:
    names = {"str": "string", "int": "exact integer", "bool": "boolean (#t or #f)"}
    if t.kind in names:
        return names[t.kind]
    if t.kind == "nest":
        return "list of exact integers and nested such lists"
    assert t.item is not None
    return f"list of {racket_type(t.item)}"


def racket_literal(v: Any) -> str:
    """Racket `read` syntax for a value of the golf types (JSON escapes are valid Racket ones)."""
    if type(v) is bool:
        return "#t" if v else "#f"
    if type(v) is int:
        return str(v)
    if type(v) is str:
        return json.dumps(v, ensure_ascii=True)
    if type(v) is list:
        return "(" + " ".join(racket_literal(x) for x in v) + ")"
    raise TypeError(f"no Racket literal for {type(v).__name__}")


# ---- Rust -----------------------------------------------------------------

RUST_EDITION = "2021"
RUST_NEST_ENUM = "enum N { I(i64), L(Vec<N>) }"


def rust_type(t: GolfType) -> str:
    if t.kind == "str":
        return "String"
    if t.kind == "int":
        return "i64"
    if t.kind == "bool":
        return "bool"
    if t.kind == "nest":
        return "Vec<N>"
    assert t.item is not None
    return f"Vec<{rust_type(t.item)}>"


def _rust_str(s: str) -> str:
    out = []
    for ch in s:
        if ch in "\\\"":
            out.append("\\" + ch)
        elif ch.isascii() and ch.isprintable():
            out.append(ch)
        else:
            out.append(f"\\u{{{ord(ch):x}}}")
    return '"' + "".join(out) + '"'


def rust_literal(t: GolfType, v: Any) -> str:
    """A Rust expression of type `rust_type(t)` for the value `v`."""
    if t.kind == "str":
        return f"String::from({_rust_str(v)})"
    if t.kind == "int":
        return f"{v}i64" if v >= 0 else f"({v}i64)"
    if t.kind == "bool":
        return "true" if v else "false"
    if t.kind == "nest":
        return "vec![" + ",".join(_rust_nest_item(x) for x in v) + "]"
    assert t.item is not None
    return "vec![" + ",".join(rust_literal(t.item, x) for x in v) + "]"


def _rust_nest_item(v: Any) -> str:
    if type(v) is list:
        return "N::L(vec![" + ",".join(_rust_nest_item(x) for x in v) + "])"
    return f"N::I({v}i64)"
