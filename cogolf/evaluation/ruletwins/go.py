"""The Go rule: which checks of a test function a twin may change, and how.

A test is `func TestX(t *testing.T)`. Its checks are the statements of the
function's own body (not inside a loop, a branch or a function literal, so each
runs exactly once when reached) that call a checker: a function of the package
whose name starts with `same` and whose last parameter is named `want` (the
expected value, compared exactly). In that last argument a twin changes one
scalar that stands alone as an argument, an element or a field value (never an
operand, an index or a map key): a decimal integer (one off), a plain string (a
same-shape neighbour), `true`/`false`, or a package constant for another of its
family (`sq.ReasonTimeout` -> `sq.ReasonPanic`). Inside a call the scalar may
change only when the callee is marked `//twins:fields` (each argument becomes a
field of its result, so a changed argument is a changed value).

A test with a `return` or `goto` outside its function literals could leave a
check unreached, so it gets no twin. A twin changes the test's first check that
has a change: an honest run stops there.
"""

from __future__ import annotations

import re

from cogolf.evaluation.ruletwins.lexer import (
    CLOSE,
    OPEN,
    LexError,
    Token,
    code,
    matching,
    split_top,
    tokens,
)
from cogolf.evaluation.ruletwins.model import Edit, SourceFile, Unit
from cogolf.evaluation.ruletwins.variants import bool_variant, int_variants, string_variants

PATTERN = "*_test.go"
FIELDS = "//twins:fields"
EARLY_EXITS = ("return", "goto")
_DECIMAL = re.compile(r"0|[1-9][0-9]*")
_WORD = re.compile(r"[A-Z][a-z0-9]*|[a-z0-9]+")


def words(name: str) -> list[str]:
    return [w.lower() for w in _WORD.findall(name.removeprefix("Test"))]


def join(parts: list[str]) -> str:
    return "Test" + "".join(p[:1].upper() + p[1:] for p in parts)


class _Package:
    """What the rule needs to know across the package's files."""

    def __init__(self, texts: dict[str, str]) -> None:
        self.toks = {name: tokens(text, "go") for name, text in texts.items()}
        self.checkers: set[str] = set()
        self.fields: set[str] = set()
        self.packages: set[str] = set()
        for name, toks in self.toks.items():
            self._declarations(texts[name], code(toks))

    def _declarations(self, text: str, toks: list[Token]) -> None:
        depth = 0
        for i, tok in enumerate(toks):
            if tok.kind == "op" and tok.text in OPEN:
                depth += 1
            elif tok.kind == "op" and tok.text in CLOSE:
                depth -= 1
            elif depth == 0 and tok.text == "import":
                self._imports(toks, i + 1)
            elif depth == 0 and tok.text == "func" and i + 1 < len(toks) \
                    and toks[i + 1].kind == "word":
                params = _params(toks, i + 2)
                if params is None:
                    continue
                name = toks[i + 1].text
                last = split_top(params, ",")[-1]
                if name.startswith("same") and last and last[0].text == "want":
                    self.checkers.add(name)
                if FIELDS in _leading_comments(text, tok.start):
                    self.fields.add(name)

    def _imports(self, toks: list[Token], at: int) -> None:
        specs = toks[at + 1:matching(toks, at)] if toks[at].text == "(" else toks[at:at + 2]
        line: list[Token] = []
        for tok in [*specs, Token("nl", "\n", 0)]:
            if tok.kind != "nl":
                line.append(tok)
                continue
            if line and line[-1].kind == "str":
                alias = line[0].text if len(line) == 2 and line[0].kind == "word" else ""
                self.packages.add(alias or line[-1].text.strip('"`').rsplit("/", 1)[-1])
            line = []


def _params(toks: list[Token], at: int) -> list[Token] | None:
    """The parameter tokens of a declaration whose name ends before `at`."""
    if at < len(toks) and toks[at].text == "[":  # type parameters
        at = matching(toks, at) + 1
    if at >= len(toks) or toks[at].text != "(":
        return None
    return [t for t in toks[at + 1:matching(toks, at)] if t.kind != "nl"]


def _leading_comments(text: str, at: int) -> list[str]:
    start = text.rfind("\n", 0, at) + 1
    lines = []
    while start > 0:
        prev = text.rfind("\n", 0, start - 1) + 1
        line = text[prev:start - 1].strip()
        if not line.startswith("//"):
            break
        lines.append(line)
        start = prev
    return lines


def parse_package(texts: dict[str, str]) -> dict[str, SourceFile]:
    """Every `*_test.go` file of one package (name -> source), read together."""
    package = _Package(texts)
    found: dict[str, list[tuple[Token, list[Token], int]]] = {}
    for name, toks in package.toks.items():
        found[name] = _tests(code(toks))
    checks = {
        (name, test.text): _checks(body, package)
        for name, tests in found.items()
        for test, body, _ in tests
    }
    pools: dict[tuple[str, ...], list[str]] = {}
    for cs in checks.values():
        for c in cs:
            for tok, slot in _scalars(c, package):
                if tok.kind in ("str", "num"):
                    pools.setdefault(slot, []).append(tok.text.strip('"'))
    everywhere = [v for values in pools.values() for v in values]
    families: dict[str, set[str]] = {}
    for toks in package.toks.values():
        for sel in _selectors(code(toks), package):
            families.setdefault(_family(sel), set()).add(sel)
    out = {}
    for name, tests in found.items():
        text = texts[name]
        units = []
        for test, body, close_end in tests:
            variants: tuple[Edit, ...] = ()
            if not any(t.text in EARLY_EXITS for t in _outside_literals(body)):
                for check in checks[(name, test.text)]:
                    variants = tuple(dict.fromkeys(
                        _variants(check, package, pools, everywhere, families)))
                    if variants:
                        break
            start = text.rfind("\n", 0, test.start) + 1
            while start > 0 and text[text.rfind("\n", 0, start - 1) + 1:start - 1] \
                    .lstrip().startswith("//"):
                start = text.rfind("\n", 0, start - 1) + 1
            newline = text.find("\n", close_end)
            end = len(text) if newline < 0 else newline + 1
            units.append(Unit(name=test.text, owner="", start=start, end=end,
                              name_at=test.start, variants=variants))
        out[name] = SourceFile(text=text, units=tuple(units))
    return out


def _tests(toks: list[Token]) -> list[tuple[Token, list[Token], int]]:
    """(name, body, end of the closing brace) of each `func TestX(t *testing.T)`."""
    out = []
    for i, tok in enumerate(toks):
        if tok.text != "func" or i + 9 >= len(toks) or toks[i + 1].kind != "word":
            continue
        name = toks[i + 1]
        shape = [t.text for t in toks[i + 2:i + 9]]
        if not name.text.startswith("Test") or shape != ["(", "t", "*", "testing", ".", "T", ")"]:
            continue
        if toks[i + 9].text != "{":
            continue
        close = matching(toks, i + 9)
        out.append((name, toks[i + 10:close], toks[close].end))
    return out


def _checks(body: list[Token], package: _Package) -> list[list[Token]]:
    """The body's own checker calls, as their last argument's tokens."""
    out: list[list[Token]] = []
    statement: list[Token] = []
    depth = 0
    for tok in [*body, Token("nl", "\n", 0)]:
        if tok.kind == "op" and tok.text in OPEN:
            depth += 1
        elif tok.kind == "op" and tok.text in CLOSE:
            depth -= 1
        if depth == 0 and (tok.kind == "nl" or tok.text == ";"):
            st = [t for t in statement if t.kind != "nl"]
            if len(st) >= 3 and st[0].text in package.checkers and st[1].text == "(":
                try:
                    closed = matching(st, 1) == len(st) - 1
                except LexError:
                    closed = False
                if closed:
                    out.append(split_top(st[2:-1], ",")[-1])
            statement = []
        else:
            statement.append(tok)
    return out


def _outside_literals(body: list[Token]) -> list[Token]:
    """The body's tokens that are not inside a function literal's braces."""
    out, i = [], 0
    while i < len(body):
        tok = body[i]
        if tok.text == "func" and i + 1 < len(body) and body[i + 1].text == "(":
            j = matching(body, i + 1) + 1
            while j < len(body) and body[j].kind != "nl" and body[j].text != "{":
                if body[j].text in ("interface", "struct") and j + 1 < len(body) \
                        and body[j + 1].text == "{":
                    j = matching(body, j + 1)
                j += 1
            if j < len(body) and body[j].text == "{":
                i = matching(body, j) + 1
                continue
        out.append(tok)
        i += 1
    return out


def _selectors(toks: list[Token], package: _Package) -> list[str]:
    return [
        f"{toks[i].text}.{toks[i + 2].text}"
        for i in range(len(toks) - 2)
        if toks[i].text in package.packages and toks[i + 1].text == "."
        and toks[i + 2].kind == "word" and toks[i + 2].text[:1].isupper()
    ]


def _family(selector: str) -> str:
    pkg, name = selector.split(".", 1)
    first = _WORD.findall(name)
    return f"{pkg}.{first[0] if first else name}"


def _scalars(arg: list[Token], package: _Package) -> list[tuple[Token, tuple[str, ...]]]:
    """The scalars of an expected value a twin may change (a selector: its first
    token), each with its slot: the field it fills or the argument it is."""
    out = []
    frames: list[list] = []  # [allowed, callee or "", commas so far]  # type: ignore[type-arg]
    for i, tok in enumerate(arg):
        prev = arg[i - 1] if i else None
        if tok.kind == "op" and tok.text in OPEN:
            callee = prev.text if tok.text == "(" and prev is not None and prev.text in \
                package.fields and (i < 2 or arg[i - 2].text != ".") else ""
            frames.append([tok.text == "{" or bool(callee), callee, 0])
            continue
        if tok.kind == "op" and tok.text in CLOSE:
            if frames:
                frames.pop()
            continue
        if tok.text == "," and frames:
            frames[-1][2] += 1
        if not all(f[0] for f in frames):
            continue
        selector = tok.kind == "word" and tok.text in package.packages and i + 2 < len(arg) \
            and arg[i + 1].text == "." and arg[i + 2].kind == "word"
        scalar = (
            (tok.kind == "num" and _DECIMAL.fullmatch(tok.text) is not None)
            or (tok.kind == "str" and tok.text[0] == '"' and "\\" not in tok.text)
            or (tok.kind == "word" and tok.text in ("true", "false") and not selector)
            or selector
        )
        if not scalar or (prev is not None and prev.text not in ("(", "{", ",", ":")):
            continue
        following = i + (3 if selector else 1)
        if following < len(arg) and arg[following].text not in (")", "}", ","):
            continue  # an operand, a call, a composite type or a map key
        if prev is not None and prev.text == ":":
            slot: tuple[str, ...] = ("field", arg[i - 2].text)
        elif frames and frames[-1][1]:
            slot = ("argument", frames[-1][1], str(frames[-1][2]))
        else:
            slot = ("element",)
        out.append((tok, slot))
    return out


def _variants(arg: list[Token], package: _Package, pools: dict[tuple[str, ...], list[str]],
              everywhere: list[str], families: dict[str, set[str]]) -> list[Edit]:
    edits = []
    for tok, slot in _scalars(arg, package):
        if tok.kind == "num":
            edits += [Edit(tok.start, tok.end, v) for v in int_variants(tok.text, pools[slot])]
        elif tok.kind == "str":
            near = string_variants(tok.text[1:-1], (pools.get(slot, []), everywhere))
            edits += [Edit(tok.start, tok.end, f'"{v}"') for v in near
                      if '"' not in v and "\\" not in v]
        elif tok.text in ("true", "false"):
            edits.append(Edit(tok.start, tok.end, bool_variant(tok.text)))
        else:
            i = arg.index(tok)
            selector = f"{tok.text}.{arg[i + 2].text}"
            others = sorted(families.get(_family(selector), set()) - {selector})
            edits += [Edit(tok.start, arg[i + 2].end, other) for other in others[:3]]
    return edits
