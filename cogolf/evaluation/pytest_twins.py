"""Mutation twins for pytest suites, planted by `ast` in the run's copy of the hidden tests.

The candidate's code shares pytest's process and can rewrite any result it
reports; a twin is how a rewritten result shows (`cogolf.evaluation.twins` holds
the verdict). A twin is a textual copy of a real test function or test-class
method (decorators, parameters, comments and formatting kept; a new name made of
the module's own words), placed beside real tests after its original, with
exactly one check changed so that the original and the twin cannot both pass
for a deterministic implementation:

- `assert E == LIT` (or `LIT == E`, `E == pytest.approx(LIT)`), `self.assertEqual`
  and its typed variants: one literal leaf changed to a near value of the same
  type (an int by a few units, a float by 10-50% so that `approx` cannot absorb
  it, one character of a string or bytes, a bool flipped; in a container one
  element). Sound: `E == LIT` and `E == LIT'` with `LIT != LIT'` cannot both hold
  for values whose equality is an equivalence; only an answer "equal to
  everything" passes both, which is what twins are for.
- `==`/`!=`, `is`/`is not`, `in`/`not in` swapped; `assert E` <-> `assert not E`
  (other comparisons, calls, names); `assertTrue`/`assertFalse`, `assertIsNone`/
  `assertIsNotNone`, `assertIn`/`assertNotIn`, `assertIs`/`assertIsNot`,
  `assertEqual`/`assertNotEqual`, `assertIsInstance`/`assertNotIsInstance`
  swapped. Sound: a check and its negation.
- `with pytest.raises(X): body` (or `self.assertRaises`) replaced by its body.
  Sound: when the original passes the body raised X, and without the guard it
  raises X again.

Each is sound only when the changed check is reached and the code is
deterministic: a check inside a loop that never runs, behind a branch, inside
`try`, or on state another test left behind can let a twin pass on a correct
implementation. Which checks are sound is therefore measured where it can be
(`cogolf commit0 prepare` dry-runs every candidate twin on the original); the
default, where no such record exists, is the checks that are statements of the
test function itself (never nested), which any passing run reaches.

A check is addressed by its site index: its position among the test's checks in
source order, a pure function of the test's source, so a record made at prepare
names the same check when the same hidden file is copied into a scoring run.
"""

from __future__ import annotations

import ast
import io
import random
import re
import tokenize
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

# Twins per run: at least TWINS_PER_RUN (all when fewer tests are eligible), and one per
# TWIN_SHARE eligible tests in larger suites (about a tenth more test time), at most
# MAX_TWINS_PER_RUN.
TWINS_PER_RUN = 8
TWIN_SHARE = 10
MAX_TWINS_PER_RUN = 64
# the exceptions a test may only expect, never leak: they stop pytest itself
_UNLEAKABLE = frozenset({"BaseException", "KeyboardInterrupt", "SystemExit", "GeneratorExit",
                         "Exit", "Interrupted"})
_SWAPS = {
    "assertTrue": "assertFalse", "assertFalse": "assertTrue",
    "assertIsNone": "assertIsNotNone", "assertIsNotNone": "assertIsNone",
    "assertIn": "assertNotIn", "assertNotIn": "assertIn",
    "assertIs": "assertIsNot", "assertIsNot": "assertIs",
    "assertEqual": "assertNotEqual", "assertEquals": "assertNotEqual",
    "assertNotEqual": "assertEqual",
    "assertIsInstance": "assertNotIsInstance", "assertNotIsInstance": "assertIsInstance",
}
_EQUALS = frozenset({"assertEqual", "assertEquals", "assertListEqual", "assertTupleEqual",
                     "assertDictEqual", "assertSetEqual", "assertSequenceEqual",
                     "assertMultiLineEqual", "assertCountEqual"})
_RAISES = frozenset({"assertRaises", "assertRaisesRegex", "assertRaisesRegexp"})
_OP_TOKENS: dict[type[ast.cmpop], tuple[str, str]] = {
    ast.Eq: (r"==", "!="), ast.NotEq: (r"!=", "=="),
    ast.Is: (r"\bis\b(?!\s+not\b)", "is not"), ast.IsNot: (r"\bis\s+not\b", "is"),
    ast.In: (r"(?<!not )\bin\b", "not in"), ast.NotIn: (r"\bnot\s+in\b", "in"),
}


@dataclass(frozen=True)
class Site:
    """One check of a test that a twin may change."""

    kind: str  # literal | far | swap | negate | raises
    node: ast.AST  # the literal, the comparison, the call's attribute, the test or the with
    top_level: bool  # a statement of the test function itself


@dataclass
class FoundTest:
    key: str  # pytest node id without parameters: `tests/test_x.py::Class::test_y`
    node: ast.FunctionDef
    block: list[ast.stmt]  # the module's or the class's body
    sites: list[Site]


@dataclass
class Planted:
    """The twins of one run: each twin's node id (without parameters) -> its original's."""

    twins: dict[str, str] = field(default_factory=dict)
    sites: dict[str, tuple[str, int]] = field(default_factory=dict)  # twin -> (original, site)


def junit_key(key: str) -> str:
    """`tests/test_x.py::Class::test_y` -> `tests.test_x.Class::test_y` (pytest's JUnit ids)."""
    path, _, rest = key.partition("::")
    names = rest.split("::")
    module = re.sub(r"\.py$", "", path.replace("/", "."))
    return ".".join([module, *names[:-1]]) + "::" + names[-1]


def function_of(test_id: str) -> str:
    """A test id without its parameters: the function it belongs to."""
    return test_id.partition("[")[0]


# --- finding tests and their checks ------------------------------------------------------


def base_name(node: ast.expr) -> str:
    return node.attr if isinstance(node, ast.Attribute) else getattr(node, "id", "")


def collected_classes(tree: ast.Module) -> list[ast.ClassDef]:
    """Top-level classes pytest collects as they are (not bases of other classes)."""
    classes = [n for n in tree.body if isinstance(n, ast.ClassDef) and not n.decorator_list]
    used_as_base = {base_name(b) for c in classes for b in c.bases}
    return [
        c for c in classes
        if c.name not in used_as_base
        and (c.name.startswith("Test") or any(base_name(b).endswith("TestCase") for b in c.bases))
        and not any(isinstance(m, ast.FunctionDef) and m.name == "__init__" for m in c.body)
    ]


def _is_test(node: ast.stmt) -> bool:
    return (isinstance(node, ast.FunctionDef) and node.name.startswith("test")
            and not any(isinstance(x, ast.Yield | ast.YieldFrom) for x in ast.walk(node)))


def find_tests(source: str, rel: str) -> list[FoundTest]:
    """The test functions and test-class methods of a module, with their checks."""
    try:
        tree = ast.parse(source)
    except (SyntaxError, ValueError, RecursionError, MemoryError):
        return []
    found = [FoundTest(f"{rel}::{n.name}", n, tree.body, sites(n))
             for n in tree.body if _is_test(n)]
    for cls in collected_classes(tree):
        found += [FoundTest(f"{rel}::{cls.name}::{m.name}", m, cls.body, sites(m))
                  for m in cls.body if _is_test(m)]
    return found


def _statements(body: list[ast.stmt], top: bool) -> Iterable[tuple[ast.stmt, bool]]:
    """Every statement of a function body in source order, nested blocks included (not
    nested functions or classes); the flag says whether it is a statement of the body."""
    for stmt in body:
        yield stmt, top
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            continue
        for name in ("body", "orelse", "finalbody"):
            yield from _statements(getattr(stmt, name, None) or [], False)
        for handler in getattr(stmt, "handlers", None) or []:
            yield from _statements(handler.body, False)
        for case in getattr(stmt, "cases", None) or []:
            yield from _statements(case.body, False)


def sites(func: ast.FunctionDef) -> list[Site]:
    """The checks of a test a twin may change, in source order."""
    found = []
    for stmt, top in _statements(func.body, True):
        site = _site(stmt, top)
        if site is not None:
            found.append(site)
    return found


def _site(stmt: ast.stmt, top: bool) -> Site | None:
    if isinstance(stmt, ast.Assert):
        return _assert_site(stmt.test, top)
    if isinstance(stmt, ast.Expr) and isinstance(stmt.value, ast.Call):
        return _unittest_site(stmt.value, top)
    if isinstance(stmt, ast.With) and len(stmt.items) == 1 and _expects_raise(stmt.items[0]):
        return Site("raises", stmt, top)
    return None


def _assert_site(test: ast.expr, top: bool) -> Site:
    if isinstance(test, ast.Compare) and len(test.ops) == 1:
        op, left, right = test.ops[0], test.left, test.comparators[0]
        if isinstance(op, ast.Eq):
            for side in (right, left):
                if _has_leaves(side):
                    return Site("literal", side, top)
            for side in (right, left):
                inner = _approx_argument(side)
                if inner is not None:
                    return Site("far", inner, top)
        if type(op) in _OP_TOKENS:
            return Site("swap", test, top)
    return Site("negate", test, top)


def _unittest_site(call: ast.Call, top: bool) -> Site | None:
    func = call.func
    if not (isinstance(func, ast.Attribute) and isinstance(func.value, ast.Name)
            and func.value.id == "self"):
        return None
    if func.attr in _EQUALS and len(call.args) >= 2 and not call.keywords:
        for side in (call.args[1], call.args[0]):
            if _has_leaves(side):
                return Site("literal", side, top)
    if func.attr == "assertAlmostEqual" and len(call.args) == 2 and not call.keywords:
        for side in (call.args[1], call.args[0]):
            if _has_leaves(side, numbers_only=True):
                return Site("far", side, top)
    if func.attr in _SWAPS and call.args:
        return Site("swap", func, top)
    return None


def _expects_raise(item: ast.withitem) -> bool:
    call = item.context_expr
    if not isinstance(call, ast.Call) or not call.args:
        return False
    func = call.func
    pytest_raises = (isinstance(func, ast.Attribute) and func.attr == "raises"
                     and isinstance(func.value, ast.Name) and func.value.id == "pytest") or (
        isinstance(func, ast.Name) and func.id == "raises")
    unittest_raises = (isinstance(func, ast.Attribute) and func.attr in _RAISES
                       and isinstance(func.value, ast.Name) and func.value.id == "self")
    if not (pytest_raises or unittest_raises):
        return False
    expected = call.args[0]
    names = expected.elts if isinstance(expected, ast.Tuple) else [expected]
    return all(isinstance(n, ast.Name | ast.Attribute) and base_name(n) not in _UNLEAKABLE
               for n in names)


def _approx_argument(node: ast.expr) -> ast.expr | None:
    """LIT of `pytest.approx(LIT)` / `approx(LIT)` with the default tolerance."""
    if (isinstance(node, ast.Call) and base_name(node.func) == "approx" and len(node.args) == 1
            and not node.keywords and _has_leaves(node.args[0], numbers_only=True)):
        return node.args[0]
    return None


# --- literals ------------------------------------------------------------------------


def _leaves(node: ast.expr) -> list[ast.expr] | None:
    """The changeable scalars of a literal (None: not a literal)."""
    if isinstance(node, ast.Constant):
        value = node.value
        if value is None or value is Ellipsis or isinstance(value, complex):
            return []
        return [node]
    if (isinstance(node, ast.UnaryOp) and isinstance(node.op, ast.USub | ast.UAdd)
            and isinstance(node.operand, ast.Constant)
            and type(node.operand.value) in (int, float)):
        return [node]
    if isinstance(node, ast.List | ast.Tuple | ast.Set):
        parts = [_leaves(e) for e in node.elts]
    elif isinstance(node, ast.Dict):
        if any(k is None for k in node.keys):
            return None
        parts = [_leaves(e) for e in [*node.keys, *node.values] if e is not None]
    else:
        return None
    if any(p is None for p in parts):
        return None
    return [leaf for p in parts if p for leaf in p]


def _has_leaves(node: ast.expr, numbers_only: bool = False) -> bool:
    leaves = _leaves(node)
    if not leaves:
        return False
    return not numbers_only or all(isinstance(_value(leaf), int | float)
                                   and not isinstance(_value(leaf), bool) for leaf in leaves)


def _value(leaf: ast.expr) -> Any:
    return ast.literal_eval(leaf)


def near_int(value: int, rng: random.Random) -> int:
    step = max(1, round(abs(value) * rng.uniform(0.02, 0.1))) if abs(value) >= 20 else (
        rng.choice((1, 1, 2, 3)))
    if value - step < 0 <= value or rng.random() < 0.5:
        return value + step
    return value - step


def far_float(value: float, rng: random.Random) -> float:
    """A float 10-50% away (never absorbed by `pytest.approx`'s default tolerance)."""
    if value == 0:
        return rng.choice((0.25, 0.5, 1.0, 1.5, 2.0))
    # one more decimal than the value has: 0.1 becomes 0.13, not 0.1 again
    digits = len(repr(value).partition(".")[2]) + 1 if "e" not in repr(value) else 6
    for _ in range(20):
        new = round(value * (1 + rng.choice((-1, 1)) * rng.uniform(0.1, 0.5)), digits)
        if abs(new - value) >= 0.05 * abs(value):
            return new
    return value * 2


_ESCAPE = re.compile(
    r"\\(?:x[0-9a-fA-F]{2}|u[0-9a-fA-F]{4}|U[0-9a-fA-F]{8}|N\{[^}]*\}|[0-7]{1,3}|.)", re.S)
_STRING = re.compile(r"^([rRbBuU]{0,2})('''|\"\"\"|'|\")(.*)\2$", re.S)


def _single_token(text: str) -> bool:
    try:
        tokens = [t for t in tokenize.generate_tokens(io.StringIO(text).readline)
                  if t.type not in (tokenize.NEWLINE, tokenize.NL, tokenize.ENDMARKER)]
    except (tokenize.TokenError, SyntaxError):
        return False
    return len(tokens) == 1 and tokens[0].type == tokenize.STRING


def near_string_token(token: str, rng: random.Random) -> str | None:
    """The string (or bytes) literal `token` with one character changed, in its own quotes."""
    match = _STRING.match(token)
    if match is None or not _single_token(token):
        return None
    prefix, quote, body = match.groups()
    # plain characters, never the inside of an escape sequence
    plain: list[int] = []
    position = 0
    for escape in _ESCAPE.finditer(body):
        plain += range(position, escape.start())
        position = escape.end()
    plain += range(position, len(body))
    boundaries = sorted({0, len(body), *plain, *(i + 1 for i in plain)})
    changeable = [i for i in plain if body[i].isascii() and body[i].isalnum()]
    if changeable:
        i = rng.choice(changeable)
        pool = ("0123456789" if body[i].isdigit() else "abcdefghijklmnopqrstuvwxyz"
                if body[i].islower() else "ABCDEFGHIJKLMNOPQRSTUVWXYZ")
        new_body = body[:i] + rng.choice(pool.replace(body[i], "")) + body[i + 1:]
    else:
        i = rng.choice(boundaries)
        new_body = body[:i] + rng.choice("aeinorst") + body[i:]
    new = prefix + quote + new_body + quote
    try:
        old_value, new_value = ast.literal_eval(token), ast.literal_eval(new)
    except (ValueError, SyntaxError):
        return None
    return new if type(new_value) is type(old_value) and new_value != old_value else None


def near_leaf(leaf: ast.expr, token: str, rng: random.Random, *, far: bool) -> str | None:
    """New source text for a literal leaf: a near value of the same type."""
    value = _value(leaf)
    if isinstance(value, bool):
        return str(not value)
    if isinstance(value, int):
        new = near_int(value, rng) if not far else value + rng.choice((-1, 1)) * max(
            1, round(abs(value) * rng.uniform(0.1, 0.5)))
        body = token.lstrip("+-").strip()
        if body.lower().startswith("0x") and new >= 0:
            return hex(new)
        return str(new)
    if isinstance(value, float):
        return repr(far_float(value, rng))
    if isinstance(value, str | bytes):
        return near_string_token(token, rng)
    return None


# --- source editing ------------------------------------------------------------------


class Source:
    """A module's bytes with ast positions (UTF-8 byte columns) turned into offsets."""

    def __init__(self, text: str) -> None:
        self.data = text.encode("utf-8")
        self.starts = [0]
        for line in self.data.splitlines(keepends=True):
            self.starts.append(self.starts[-1] + len(line))

    def offset(self, line: int, col: int) -> int:
        return self.starts[line - 1] + col

    def span(self, node: ast.AST) -> tuple[int, int]:
        return (self.offset(node.lineno, node.col_offset),  # type: ignore[attr-defined]
                self.offset(node.end_lineno, node.end_col_offset))  # type: ignore[attr-defined]

    def text(self, start: int, end: int) -> str:
        return self.data[start:end].decode("utf-8")

    def line_start(self, line: int) -> int:
        return self.starts[line - 1]

    def line_end(self, line: int) -> int:
        return self.starts[line] if line < len(self.starts) else len(self.data)


Edit = tuple[int, int, str]  # bytes [start, end) of the module replaced by text


def mutation(src: Source, site: Site, rng: random.Random) -> Edit | None:
    """The one change a twin makes at `site`; None when none can be made there."""
    if site.kind in ("literal", "far"):
        leaves = _leaves(site.node)  # type: ignore[arg-type]
        if not leaves:
            return None
        for leaf in rng.sample(leaves, len(leaves)):
            start, end = src.span(leaf)
            new = near_leaf(leaf, src.text(start, end), rng, far=site.kind == "far")
            if new is not None:
                return (start, end, new)
        return None
    if site.kind == "swap" and isinstance(site.node, ast.Attribute):
        start, end = src.span(site.node)
        return (end - len(site.node.attr.encode()), end, _SWAPS[site.node.attr])
    if site.kind == "swap" and isinstance(site.node, ast.Compare):
        left_end = src.span(site.node.left)[1]
        right_start = src.span(site.node.comparators[0])[0]
        between = src.text(left_end, right_start)
        pattern, new = _OP_TOKENS[type(site.node.ops[0])]
        match = re.search(pattern, between)
        if match is None:
            return None
        at = left_end + len(between[: match.start()].encode())
        return (at, at + len(match.group().encode()), new)
    if site.kind == "negate":
        test = site.node
        start, end = src.span(test)
        text = src.text(start, end)
        if isinstance(test, ast.UnaryOp) and isinstance(test.op, ast.Not):
            return (start, end, text[3:].lstrip())
        if isinstance(test, ast.BoolOp | ast.IfExp | ast.NamedExpr | ast.Lambda):
            return (start, end, f"not ({text})")
        return (start, end, f"not {text}")
    if site.kind == "raises":
        return _unguarded(src, site.node)  # type: ignore[arg-type]
    return None


def _unguarded(src: Source, with_node: ast.With) -> Edit | None:
    """`with pytest.raises(X): body` -> body, dedented to the `with`'s column."""
    body = with_node.body
    if body[0].lineno == with_node.lineno:
        return None  # `with ...: stmt` on one line
    # a string spanning lines would change if its lines were dedented
    for node in ast.walk(with_node):
        if isinstance(node, ast.Constant) and isinstance(node.value, str | bytes) and (
                node.end_lineno != node.lineno):  # type: ignore[attr-defined]
            return None
    shift = body[0].col_offset - with_node.col_offset
    start = src.line_start(with_node.lineno)
    first = src.line_start(body[0].lineno)
    end = src.line_end(with_node.end_lineno)  # type: ignore[arg-type]
    lines = []
    for line in src.text(first, end).splitlines(keepends=True):
        if line.strip() and not line[:shift].isspace():
            return None
        lines.append(line[shift:] if line.strip() else line)
    return (start, end, "".join(lines))


_DEF_NAME = re.compile(rb"def\s+(\w+)")


def twin_source(src: Source, test: FoundTest, edit: Edit | None, name: str) -> str | None:
    """The original's source lines (decorators to end) with `edit` applied and renamed;
    None when that is not a valid function differing from the original in its body (with
    no edit: an unchanged copy)."""
    node = test.node
    first = min([node.lineno, *(d.lineno for d in node.decorator_list)])
    start, end = src.line_start(first), src.line_end(node.end_lineno)  # type: ignore[arg-type]
    def_at = src.offset(node.lineno, node.col_offset)
    match = _DEF_NAME.match(src.data, def_at)
    assert match is not None and match.group(1).decode() == node.name
    edits = sorted([*([edit] if edit else []), (match.start(1), match.end(1), name)],
                   reverse=True)
    data = src.data
    for e_start, e_end, text in edits:
        if not start <= e_start <= e_end <= end:
            return None  # never an edit outside the test
        data = data[:e_start] + text.encode() + data[e_end:]
    shift = sum(len(t.encode()) - (e - s) for s, e, t in edits)
    out = data[start:end + shift].decode("utf-8")
    try:  # a method's lines keep their indentation: parse them inside a class
        parsed = ast.parse(out if not out[:1].isspace() else "class _Twin:\n" + out).body[0]
        twin = parsed.body[0] if isinstance(parsed, ast.ClassDef) else parsed
    except (SyntaxError, IndexError):
        return None
    if not isinstance(twin, ast.FunctionDef) or twin.name != name:
        return None
    twin.name = node.name
    if (ast.dump(twin) == ast.dump(node)) == (edit is not None):
        return None  # the edit changed nothing the interpreter sees (a comment, say)
    return out if out.endswith("\n") else out + "\n"


# --- names ---------------------------------------------------------------------------


def bound_names(block: list[ast.stmt]) -> set[str]:
    """Names a module's or a class's own statements bind: a new test must shadow none."""
    names: set[str] = set()
    for stmt in block:
        if isinstance(stmt, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef):
            names.add(stmt.name)
        elif isinstance(stmt, ast.Import | ast.ImportFrom):
            names |= {(a.asname or a.name).split(".")[0] for a in stmt.names}
        else:
            names |= {n.id for n in ast.walk(stmt) if isinstance(n, ast.Name)
                      and isinstance(n.ctx, ast.Store)}
    return names


def module_words(tree_or_source: str) -> list[str]:
    """The words of a module's own names, as a canary's or a twin's name is built from."""
    try:
        tree = ast.parse(tree_or_source)
    except SyntaxError:
        return []
    names = {n.id for n in ast.walk(tree) if isinstance(n, ast.Name)}
    names |= {n.name for n in ast.walk(tree) if isinstance(n, ast.FunctionDef)}
    return sorted({w for name in names for w in name.lower().split("_")
                   if w.isalpha() and 2 < len(w) < 12 and w != "test"})


def twin_name(original: str, words: Sequence[str], taken: set[str], rng: random.Random) -> str:
    """A plausible test name: the original's words with one changed or added (more when
    those names are taken), never a name already in `taken`."""
    snake = original.startswith("test_") or "_" in original
    own = [w for w in (original.split("_")[1:] if snake else
                       re.findall(r"[A-Z][a-z0-9]*|[a-z0-9]+", original[4:])) if w]
    pool = [w for w in words if w not in own] or ["case", "again", "other", "more"]

    def spell(parts: list[str]) -> str:
        return ("test_" + "_".join(parts)) if snake else (
            "test" + "".join(p[:1].upper() + p[1:] for p in parts))

    for attempt in range(200):
        parts = list(own)
        for _ in range(1 + attempt // 40):
            word = rng.choice(pool)
            if parts and rng.random() < 0.5:
                parts[rng.randrange(len(parts))] = word
            else:
                parts.insert(rng.randrange(len(parts) + 1), word)
        name = spell(parts[:6])
        if name not in taken and name.isidentifier():
            return name
    parts = list(own)
    while (name := spell(parts)) in taken or not name.isidentifier():
        parts.append(rng.choice(pool))
    return name


# --- planting ------------------------------------------------------------------------


def test_modules(tests: Sequence[Path]) -> list[Path]:
    """Python modules under the test paths (a path may be one module), no links. Which
    of their tests count is decided by report ids, so helpers here do no harm."""
    modules: list[Path] = []
    for unit in tests:
        if unit.is_file():
            modules += [] if unit.is_symlink() else [unit]
        elif unit.is_dir() and not unit.is_symlink():
            modules += sorted(p for p in unit.rglob("*.py") if p.is_file() and not p.is_symlink())
    return list(dict.fromkeys(modules))


def _read(module: Path) -> str | None:
    try:
        return module.read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError):
        return None  # no twin where the source cannot be read back exactly


def _tests_of(tests: Sequence[Path], rootdir: Path, functions: Iterable[str]
              ) -> Iterable[FoundTest]:
    wanted = set(functions)
    for module in test_modules(tests):
        text = _read(module)
        if text is not None:
            rel = module.relative_to(rootdir).as_posix()
            yield from (t for t in find_tests(text, rel) if junit_key(t.key) in wanted)


def default_sites(tests: Sequence[Path], rootdir: Path, functions: Iterable[str]
                  ) -> dict[str, list[int]]:
    """Without a measured record: every check that is a statement of the test function
    itself, for the tests whose JUnit key is in `functions`."""
    found = {t.key: [i for i, s in enumerate(t.sites) if s.top_level]
             for t in _tests_of(tests, rootdir, functions)}
    return {k: v for k, v in found.items() if v}


def all_sites(tests: Sequence[Path], rootdir: Path, functions: Iterable[str]
              ) -> dict[str, list[int]]:
    """Every check of the tests whose JUnit key is in `functions` (candidates to measure)."""
    return {t.key: list(range(len(t.sites))) for t in _tests_of(tests, rootdir, functions)
            if t.sites}


COPY = -1  # the site of an unchanged copy (dry runs only)


def twins_for(eligible_tests: int) -> int:
    """How many twins a run plants among `eligible_tests`."""
    share = -(-eligible_tests // TWIN_SHARE)
    return min(eligible_tests, max(TWINS_PER_RUN, min(MAX_TWINS_PER_RUN, share)))


def run_count(eligible: Mapping[str, Sequence[int]], twins: bool | None) -> int | None:
    """A scoring run's `count` for `plant_twins`: True, the run's number; False, none (for
    benchmarks only); None, one at every eligible check (proofs and dry runs)."""
    if twins is None:
        return None
    return twins_for(sum(1 for v in eligible.values() if v)) if twins else 0


def plant_twins(rootdir: Path, eligible: Mapping[str, Sequence[int]], count: int | None,
                rng: random.Random | None = None, *, dry_run: bool = False) -> Planted:
    """Plant twins of eligible tests (`key -> site indices`) into their modules under
    `rootdir`. `count` twins of distinct tests, each at a random eligible site, placed
    at random after its original; None: one twin per eligible site. A dry run (count
    None) places each right after its original, the worst place for a twin that leaves
    state behind, and adds an unchanged copy of each test (site `COPY`), which must
    pass: a test that does not pass a second time is not sound for twins."""
    rng = rng or random.SystemRandom()
    chosen: list[tuple[str, list[int]]] = []
    if count is None:
        chosen = [(key, [i]) for key, indices in eligible.items()
                  for i in [*indices, *([COPY] if dry_run and indices else [])]]
    elif count > 0:
        keys = [k for k, v in eligible.items() if v]
        chosen = [(key, rng.sample(list(eligible[key]), len(eligible[key])))
                  for key in rng.sample(keys, min(count, len(keys)))]
    by_module: dict[str, list[tuple[str, list[int]]]] = {}
    for key, indices in chosen:
        by_module.setdefault(key.split("::", 1)[0], []).append((key, indices))
    planted = Planted()
    for rel, wanted in sorted(by_module.items()):
        _plant_module(rootdir / rel, rel, wanted, rng, planted, right_after=dry_run)
    return planted


def _plant_module(path: Path, rel: str, wanted: list[tuple[str, list[int]]],
                  rng: random.Random, planted: Planted, *, right_after: bool) -> None:
    text = _read(path) if not path.is_symlink() and path.is_file() else None
    if text is None:
        return
    src = Source(text)
    tests = {t.key: t for t in find_tests(text, rel)}
    words = module_words(text)
    taken_by_block: dict[int, set[str]] = {}
    inserts: list[tuple[int, str]] = []
    here: dict[str, tuple[str, int]] = {}
    for key, indices in wanted:
        test = tests.get(key)
        if test is None:
            continue  # the file is not the one measured: plant nothing there
        taken = taken_by_block.setdefault(id(test.block), bound_names(test.block))
        made = None
        for index in indices:
            if index >= len(test.sites) or index < COPY:
                continue
            try:  # a value pathological enough to break printing it: no twin there
                edit = mutation(src, test.sites[index], rng) if index != COPY else None
                name = twin_name(test.node.name, words, taken, rng)
                source = twin_source(src, test, edit, name) if edit or index == COPY else None
            except (ValueError, RecursionError):
                continue
            if source is not None:
                made = index, name, source
                break
        if made is None:
            continue
        index, name, source = made
        taken.add(name)
        # beside real tests, after the original (its decorators' names are defined there)
        position = test.block.index(test.node)
        anchor = test.block[position if right_after else rng.randrange(position,
                                                                        len(test.block))]
        at = src.line_end(anchor.end_lineno)  # type: ignore[arg-type]
        method = key.count("::") == 2
        inserts.append((at, ("\n" if method else "\n\n") + source))
        here[key.rsplit("::", 1)[0] + "::" + name] = (key, index)
    if not inserts:
        return
    data = src.data if src.data.endswith(b"\n") else src.data + b"\n"
    # stable and reversed: twins at one place keep their order
    for at, insert in sorted(inserts, key=lambda x: x[0], reverse=True):
        data = data[:at] + insert.encode() + data[at:]
    try:
        ast.parse(data)
    except SyntaxError:  # never lose a real module to a twin
        return
    path.write_bytes(data)
    for twin, (key, index) in here.items():
        planted.twins[twin] = key
        planted.sites[twin] = (key, index)


@dataclass(frozen=True)
class TwinPlan:
    """Which twins a run plants and which of them the verdict counts."""

    eligible: Mapping[str, Sequence[int]]  # test key -> site indices
    count: int | None  # None: one per eligible site (a dry run); 0: none
    # a twin item counts only when its original's report id is here (None: every one);
    # a dry run passes an empty set: it measures outcomes and judges nothing
    originals: frozenset[str] | None = None
    dry_run: bool = False  # see `plant_twins`
