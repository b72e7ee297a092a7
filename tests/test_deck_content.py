"""Structural facts about the shipped core pack.

These checks read the pack through `cogolf.deck.load` and inspect sources with
`ast` only; whether the code agrees with the examples and par cases is the job
of `cogolf deck check`, which runs every program in the sandbox.
"""

from __future__ import annotations

import ast

import pytest

from cogolf import deck as deck_mod
from cogolf import values

ALLOWED_IMPORTS = frozenset(
    {"math", "re", "collections", "itertools", "functools", "heapq", "bisect", "string", "json"}
)
MAX_IMPL_CHARS = 4000
MAX_VALUE_JSON_CHARS = 400
MAX_NAME_CHARS = 40
MAX_WHY_CHARS = 120
MAX_NOTE_CHARS = 200
CORE_SPECS = 12

_ATOMS = frozenset({"int", "float", "str", "bool", "None"})


def _type_ok(text: str) -> bool:
    """Accept the Python-style type strings specs use: atoms, list[T], dict[str, T], unions."""
    parts = _split_top(text, " | ")
    if len(parts) > 1:
        return all(_type_ok(p) for p in parts)
    if text in _ATOMS:
        return True
    if text.startswith("list[") and text.endswith("]"):
        return _type_ok(text[5:-1])
    if text.startswith("dict[str, ") and text.endswith("]"):
        return _type_ok(text[10:-1])
    return False


def _split_top(text: str, sep: str) -> list[str]:
    """Split at `sep` only outside brackets."""
    parts, depth, start, i = [], 0, 0, 0
    while i < len(text):
        if text[i] == "[":
            depth += 1
        elif text[i] == "]":
            depth -= 1
        elif depth == 0 and text.startswith(sep, i):
            parts.append(text[start:i])
            i += len(sep)
            start = i
            continue
        i += 1
    parts.append(text[start:])
    return parts


@pytest.mark.parametrize(
    ("text", "ok"),
    [
        ("int | None", True),
        ("list[list[int]]", True),
        ("dict[str, list[str] | None]", True),
        ("tuple[int]", False),
        ("dict[int, str]", False),
        ("list[int", False),
    ],
)
def test_type_grammar(text: str, ok: bool) -> None:
    assert _type_ok(text) is ok


@pytest.fixture(scope="module")
def pack() -> deck_mod.Deck:
    return deck_mod.load()


def _keys() -> list[str]:
    return deck_mod.load().spec_keys()


def test_pack_identity(pack: deck_mod.Deck) -> None:
    assert (pack.name, pack.version) == ("core", "core-1")
    assert len(pack.spec_keys()) == CORE_SPECS
    assert pack.digest.startswith("sha256:")
    assert pack.digest != pack.public.digest


def test_digest_is_stable(pack: deck_mod.Deck) -> None:
    assert deck_mod.load().digest == pack.digest


def test_draw_nine_distinct_holes(pack: deck_mod.Deck) -> None:
    holes = pack.draw(seed=7, holes=9)
    assert len(set(holes)) == 9
    assert set(holes) <= set(pack.spec_keys())
    assert pack.draw(seed=7, holes=9) == holes


def test_titles_and_prompts_are_unique(pack: deck_mod.Deck) -> None:
    specs = [pack.spec(k) for k in sorted(pack.public.specs)]
    assert len({s.title for s in specs}) == CORE_SPECS
    assert len({s.prompt for s in specs}) == CORE_SPECS


@pytest.mark.parametrize("key", _keys())
def test_signature(pack: deck_mod.Deck, key: str) -> None:
    sig = pack.spec(key).signature
    assert sig.function == "solve"
    assert sig.params, "solve takes at least one argument"
    assert len({p.name for p in sig.params}) == len(sig.params)
    for p in sig.params:
        assert _type_ok(p.type), f"param {p.name}: unsupported type {p.type!r}"
    assert _type_ok(sig.returns), f"returns: unsupported type {sig.returns!r}"


def _check_case(where: str, arity: int, args: list, expect: object) -> None:
    assert len(args) == arity, f"{where}: {len(args)} args for {arity} params"
    for part, value in (("args", args), ("expect", expect)):
        text = values.compact_json(values.canonical(value))
        assert len(text) <= MAX_VALUE_JSON_CHARS, f"{where}.{part}: {len(text)} chars"


@pytest.mark.parametrize("key", _keys())
def test_examples_and_par_fit_the_signature(pack: deck_mod.Deck, key: str) -> None:
    arity = len(pack.spec(key).signature.params)
    for i, ex in enumerate(pack.spec(key).examples):
        _check_case(f"examples[{i}]", arity, ex.args, ex.expect)
    hidden = pack.hidden[key]
    for i, case in enumerate(hidden.par):
        _check_case(f"par[{i}]", arity, case.args, case.expect)
    assert len({values.fingerprint(c.args) for c in hidden.par}) == len(hidden.par)


@pytest.mark.parametrize("key", _keys())
def test_baseline_tests_respect_caps(pack: deck_mod.Deck, key: str) -> None:
    arity = len(pack.spec(key).signature.params)
    for name, play in pack.public.specs[key].baselines.items():
        assert len(play.note) <= MAX_NOTE_CHARS, f"{name}.note"
        assert play.note, f"{name}.note is empty"
        for i, t in enumerate(play.tests):
            assert 0 < len(t.name) <= MAX_NAME_CHARS, f"{name}.tests[{i}].name"
            assert 0 < len(t.why) <= MAX_WHY_CHARS, f"{name}.tests[{i}].why"
            _check_case(f"{name}.tests[{i}]", arity, t.args, t.expect)
        prints = {values.fingerprint(t.args) for t in play.tests}
        assert len(prints) == deck_mod.BASELINE_TESTS, f"{name}: tests repeat arguments"


def _solve_def(source: str) -> ast.FunctionDef:
    tree = ast.parse(source)
    defs = [n for n in tree.body if isinstance(n, ast.FunctionDef) and n.name == "solve"]
    assert len(defs) == 1, "exactly one top-level def solve"
    return defs[0]


def _imports(source: str) -> set[str]:
    found: set[str] = set()
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            found.update(a.name.split(".")[0] for a in node.names)
        elif isinstance(node, ast.ImportFrom):
            found.add((node.module or "").split(".")[0])
    return found


@pytest.mark.parametrize("key", _keys())
def test_implementations_are_well_formed(pack: deck_mod.Deck, key: str) -> None:
    params = [p.name for p in pack.spec(key).signature.params]
    baselines = pack.public.specs[key].baselines
    sources = {"reference": pack.hidden[key].reference}
    sources.update({name: b.impl for name, b in baselines.items()})
    for name, source in sources.items():
        assert len(source) <= MAX_IMPL_CHARS, f"{name}: {len(source)} chars"
        fn = _solve_def(source)
        assert [a.arg for a in fn.args.args] == params, f"{name}: solve parameters"
        extra = _imports(source) - ALLOWED_IMPORTS
        assert not extra, f"{name}: imports {sorted(extra)}"
    assert baselines["literalist"].impl != baselines["pedant"].impl


@pytest.mark.parametrize("key", _keys())
def test_ambiguity_note_is_one_line(pack: deck_mod.Deck, key: str) -> None:
    note = pack.hidden[key].ambiguity
    assert note.strip() == note and "\n" not in note
    assert "reference" in note, "the note says which reading the reference takes"


def test_public_half_loads_alone(pack: deck_mod.Deck) -> None:
    public = deck_mod.load_public()
    assert sorted(public.specs) == pack.spec_keys()
    assert public.digest == pack.public.digest
