"""The PHPUnit rule: which checks of a test method a twin may change, and how.

A test is a `public function test_...(): void` method. Its checks are the
statements of the method's own body (not inside a loop, a branch or a closure, so
each runs exactly once when reached) of the form `$this->assertX(...);`:

- `assertSame(LITERAL, ...)`, `assertNotSame`, and the evaluator's own helpers
  named `assert...` whose first parameter is `$expected` (they must compare it
  exactly): one scalar of the literal changes (an integer, a plain string, a
  boolean; nested arrays are read, their keys are never changed and may not repeat);
- `assertCount(INTEGER, ...)`: the count changes;
- `assertTrue` <-> `assertFalse`, `assertNull` <-> `assertNotNull`: inverted.

A method with a `return`, `yield` or `goto` outside its closures could leave a
check unreached, so it gets no twin. A twin changes the method's first check
that has a change: an honest run stops there, so a twin costs little more than
its setup.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from cogolf.evaluation.ruletwins.lexer import LexError, Token, code, matching, split_top, tokens
from cogolf.evaluation.ruletwins.model import Edit, SourceFile, Unit
from cogolf.evaluation.ruletwins.variants import bool_variant, int_variants, string_variants

PATTERN = "*.php"
INVERSE = {
    "assertTrue": "assertFalse",
    "assertFalse": "assertTrue",
    "assertNull": "assertNotNull",
    "assertNotNull": "assertNull",
}
EXACT = ("assertSame", "assertNotSame")
EARLY_EXITS = ("return", "yield", "goto")


def words(name: str) -> list[str]:
    return [w for w in name.removeprefix("test").split("_") if w]


def join(parts: list[str]) -> str:
    return "test_" + "_".join(parts)


@dataclass(frozen=True)
class _Scalar:
    token: Token
    slot: tuple[str, ...]  # where it sits: what it is compared with, and its place in the literal
    role: str  # what it is compared with, roughly: the last string in the compared expression


@dataclass(frozen=True)
class _Test:
    name: str
    owner: str
    name_token: Token
    body: list[Token]
    close_end: int


def parse_package(texts: dict[str, str]) -> dict[str, SourceFile]:
    """Every PHP file of the evaluator (name -> source), read together: helpers
    declared in one file (a base test case) are checks in the others."""
    toks = {name: [t for t in code(tokens(text, "php")) if t.kind != "nl"]
            for name, text in texts.items()}
    exact = set(EXACT) | {h for ts in toks.values() for h in _expected_first_helpers(ts)}
    tests = {name: _tests(ts) for name, ts in toks.items()}
    checks = {(name, t.name): _checks(t.body, exact) for name, ts in tests.items() for t in ts}
    scalars = [s for cs in checks.values() for c in cs for s in _check_scalars(c, exact)]
    # where to look for a plausible other value, nearest first: the same place in
    # the same kind of check, the same place in any check, the same position of
    # the same compared thing, the same compared thing, the whole evaluator
    tiers: list[dict[tuple[str, ...], list[str]]] = [{}, {}, {}, {}, {}]
    for s in scalars:
        for tier, key in zip(tiers, _tier_keys(s), strict=True):
            tier.setdefault(key, []).append(_value(s.token))
    out = {}
    for name, found in tests.items():
        text = texts[name]
        units = []
        for test in found:
            variants: tuple[Edit, ...] = ()
            if not any(t.text in EARLY_EXITS for t in _outside_closures(test.body)):
                for check in checks[(name, test.name)]:
                    variants = tuple(dict.fromkeys(_variants(check, exact, lambda s: tuple(
                        tier[key] for tier, key in zip(tiers, _tier_keys(s), strict=True)))))
                    if variants:
                        break
            start, end = _lines(text, test.name_token.start, test.close_end)
            units.append(Unit(name=test.name, owner=test.owner, start=start, end=end,
                              name_at=test.name_token.start, variants=variants))
        out[name] = SourceFile(text=text, units=tuple(units))
    return out


def _tier_keys(s: _Scalar) -> tuple[tuple[str, ...], ...]:
    return s.slot, s.slot[1:], (s.role, *s.slot[2:][-1:]), (s.role,), ()


def _expected_first_helpers(toks: list[Token]) -> list[str]:
    """Methods `function assertX(TYPE $expected, ...)` of the evaluator's classes."""
    out = []
    for i in range(len(toks) - 3):
        if toks[i].text == "function" and toks[i + 1].text.startswith("assert") \
                and toks[i + 2].text == "(":
            params = split_top(toks[i + 3:matching(toks, i + 2)], ",")
            if params and any(t.text == "$expected" for t in params[0]):
                out.append(toks[i + 1].text)
    return out


def _tests(toks: list[Token]) -> list[_Test]:
    out = []
    owner = ""
    for i, tok in enumerate(toks):
        if tok.text == "class" and i + 1 < len(toks) and toks[i + 1].kind == "word":
            owner = toks[i + 1].text
        body_at = _test_header(toks, i)
        if body_at is not None:
            close = matching(toks, body_at)
            out.append(_Test(toks[i + 2].text, owner, toks[i + 2], toks[body_at + 1:close],
                             toks[close].end))
    return out


def _test_header(toks: list[Token], i: int) -> int | None:
    """For `public function test_x(): void {` starting at `i`, the index of `{`."""
    shape = [t.text for t in toks[i:i + 8]]
    if len(shape) < 6 or shape[:2] != ["public", "function"] or shape[3:5] != ["(", ")"]:
        return None
    if not (toks[i + 2].kind == "word" and toks[i + 2].text.startswith("test")):
        return None
    if shape[5] == "{":
        return i + 5
    if shape[5:8] == [":", "void", "{"]:
        return i + 7
    return None


def _statements(body: list[Token]) -> list[list[Token]]:
    """The body's own statements (a block statement is one, whatever it holds)."""
    out: list[list[Token]] = [[]]
    depth = 0
    for tok in body:
        out[-1].append(tok)
        if tok.kind == "op" and tok.text in ("(", "[", "{"):
            depth += 1
        elif tok.kind == "op" and tok.text in (")", "]", "}"):
            depth -= 1
            if depth == 0 and tok.text == "}":
                out.append([])
        elif depth == 0 and tok.text == ";":
            out.append([])
    return [s for s in out if s]


def _checks(body: list[Token], exact: set[str]) -> list[list[list[Token]]]:
    """The body's own `$this->assertX(...);` statements, in order: [[name], arg, arg...]."""
    known = exact | set(INVERSE) | {"assertCount"}
    out = []
    for st in _statements(body):
        if len(st) < 6 or [t.text for t in st[:2]] != ["$this", "->"] or st[3].text != "(":
            continue
        if st[2].text not in known:
            continue
        try:
            close = matching(st, 3)
        except LexError:
            continue
        if close == len(st) - 2 and st[-1].text == ";":
            out.append([[st[2]], *split_top(st[4:close], ",")])
    return out


def _outside_closures(body: list[Token]) -> list[Token]:
    """The body's tokens that are not inside a closure's braces."""
    out, i = [], 0
    while i < len(body):
        if body[i].text == "function":
            j = i + 1
            while j < len(body) and body[j].text != "{":
                j += 1
            if j < len(body):
                i = matching(body, j) + 1
                continue
        out.append(body[i])
        i += 1
    return out


def _plain(tok: Token) -> str:
    return tok.text[1:-1]


def _value(tok: Token) -> str:
    return _plain(tok) if tok.kind == "str" else tok.text


def _is_plain_string(tok: Token) -> bool:
    inner = tok.text[1:-1]
    if tok.kind != "str" or "\\" in inner or tok.text[0] in inner:
        return False
    return tok.text[0] == "'" or "$" not in inner


def _check_scalars(check: list[list[Token]], exact: set[str]) -> list[_Scalar]:
    name = check[0][0].text
    if name not in exact or len(check) < 2 or not check[1]:
        return []
    compared = check[2] if len(check) > 2 else []
    strings = [_plain(t) for t in compared if t.kind == "str"]
    role = strings[-1].rsplit(".", 1)[-1] if strings else "".join(t.text for t in compared)
    found: list[tuple[Token, tuple[str, ...]]] = []
    if _literal(check[1], 0, (), found) != len(check[1]):
        return []
    return [_Scalar(tok, (name, role, *path), role) for tok, path in found]


def _variants(check: list[list[Token]], exact: set[str],
              pools: Callable[[_Scalar], tuple[list[str], ...]]) -> list[Edit]:
    name = check[0][0]
    if name.text in INVERSE:
        return [Edit(name.start, name.end, INVERSE[name.text])]
    if name.text == "assertCount":
        first = check[1] if len(check) > 1 else []
        if len(first) == 1 and first[0].kind == "num" and first[0].text.isdigit():
            return [Edit(first[0].start, first[0].end, v) for v in int_variants(first[0].text)]
        return []
    edits = []
    for scalar in _check_scalars(check, exact):
        tok = scalar.token
        if tok.kind == "num":
            edits += [Edit(tok.start, tok.end, v)
                      for v in int_variants(tok.text, pools(scalar)[0])]
        elif tok.kind == "str":
            q = tok.text[0]
            edits += [Edit(tok.start, tok.end, q + v + q)
                      for v in string_variants(_plain(tok), pools(scalar))
                      if "\\" not in v and q not in v and (q == "'" or "$" not in v)]
        else:
            edits.append(Edit(tok.start, tok.end, bool_variant(tok.text)))
    return edits


def _literal(toks: list[Token], at: int, path: tuple[str, ...],
             found: list[tuple[Token, tuple[str, ...]]]) -> int | None:
    """Read one literal from `at`, adding its changeable scalars with their place;
    the index after it, or None when it is no literal."""
    if at >= len(toks):
        return None
    tok = toks[at]
    low = tok.text.lower()
    boolean = tok.kind == "word" and low in ("true", "false")
    if (tok.kind == "num" and tok.text.isdigit()) or boolean:
        found.append((tok, path))
        return at + 1
    if tok.kind == "str":
        if not _is_plain_string(tok):
            return None
        found.append((tok, path))
        return at + 1
    if tok.kind == "word" and low == "null":
        return at + 1
    if tok.text != "[":
        return None
    try:
        close = matching(toks, at)
    except LexError:
        return None
    keys: set[int | str] = set()
    index = 0
    for element in split_top(toks[at + 1:close], ","):
        if not element:
            continue  # a trailing comma
        parts = split_top(element, "=>")
        place = str(index)
        if len(parts) == 2:
            key = _key(parts[0])
            if key is None or key in keys:
                return None  # a repeated key would hide a changed value
            keys.add(key)
            place = f"key {key}"
        elif len(parts) != 1:
            return None
        index += 1
        if _literal(parts[-1], 0, (*path, place), found) != len(parts[-1]):
            return None
    return close + 1


def _key(toks: list[Token]) -> int | str | None:
    """An array key as PHP stores it ('7' and 7 are one key), or None if not a literal."""
    if len(toks) != 1:
        return None
    tok = toks[0]
    if tok.kind == "num" and tok.text.isdigit():
        return int(tok.text)
    if tok.kind == "str" and _is_plain_string(tok):
        inner = _plain(tok)
        return int(inner) if inner.isdigit() and str(int(inner)) == inner else inner
    return None


def _lines(text: str, name_at: int, close_end: int) -> tuple[int, int]:
    """Whole lines from the method's leading comment lines to its closing brace."""
    start = text.rfind("\n", 0, name_at) + 1
    while start > 0:
        prev = text.rfind("\n", 0, start - 1) + 1
        line = text[prev:start - 1].strip()
        if not line or not line.startswith(("/**", "*", "//", "#")):
            break
        start = prev
    newline = text.find("\n", close_end)
    return start, (len(text) if newline < 0 else newline + 1)
