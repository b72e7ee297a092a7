"""Loading, validating and drawing from a deck pack.

A pack has two halves kept in separate directories: the public deck (specs and
the scripted baselines, readable by any bot) and the hidden references (the
reference implementation, par cases and the ambiguity note). The layout:

    deck/<pack>/pack.json              {"name": "core", "version": "core-1"}
    deck/<pack>/<key>/spec.json        key, title, prompt, signature, two examples
    deck/<pack>/<key>/literalist.py    baseline implementation
    deck/<pack>/<key>/pedant.py        baseline implementation
    deck/<pack>/<key>/baselines.json   {"literalist": {tests, note}, "pedant": {tests, note}}
    references/<pack>/pack.json        same name and version as the deck
    references/<pack>/<key>/reference.py
    references/<pack>/<key>/hidden.json  {"par": [4 x {args, expect}], "ambiguity": "..."}

Every structural problem is reported as `DeckError` naming the file and field.
Checks that need to run code (examples agree with the reference, ...) live in
`cogolf.deck_check`, since they need the sandbox.
"""

from __future__ import annotations

import hashlib
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from cogolf import values

ROOT = Path(__file__).resolve().parent.parent
DEFAULT_DECK = ROOT / "deck" / "core"
DEFAULT_REFERENCES = ROOT / "references" / "core"

MAX_TITLE_CHARS = 48
MAX_PROMPT_CHARS = 1200
EXAMPLES_PER_SPEC = 2
PAR_CASES_PER_SPEC = 4
BASELINE_TESTS = 5
BASELINES = ("literalist", "pedant")


class DeckError(ValueError):
    """A pack that cannot be used; the message names the file and the field."""


class Param(msgspec.Struct, frozen=True):
    name: str
    type: str


class Signature(msgspec.Struct, frozen=True):
    function: str
    params: list[Param]
    returns: str


class Example(msgspec.Struct, frozen=True):
    args: list[Any]
    expect: Any


class Spec(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str
    title: str
    prompt: str
    signature: Signature
    examples: list[Example]


class BaselineTest(msgspec.Struct, frozen=True):
    name: str
    args: list[Any]
    expect: Any
    why: str = ""


class BaselinePlay(msgspec.Struct, frozen=True):
    tests: list[BaselineTest]
    note: str = ""


class Baselines(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    literalist: BaselinePlay
    pedant: BaselinePlay


class Hidden(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    par: list[Example]
    ambiguity: str


class PackInfo(msgspec.Struct, frozen=True):
    name: str
    version: str


@dataclass(frozen=True)
class Baseline:
    """A scripted play for one spec: an implementation, five tests and a note."""

    impl: str
    tests: tuple[BaselineTest, ...]
    note: str


@dataclass(frozen=True)
class PublicSpec:
    spec: Spec
    baselines: dict[str, Baseline]


@dataclass(frozen=True)
class HiddenSpec:
    reference: str
    par: tuple[Example, ...]
    ambiguity: str


@dataclass(frozen=True)
class PublicDeck:
    """The half of a pack a bot process may read."""

    name: str
    version: str
    specs: dict[str, PublicSpec]
    digest: str  # over the public files only


@dataclass(frozen=True)
class Deck:
    """A full pack: public deck plus hidden references."""

    public: PublicDeck
    hidden: dict[str, HiddenSpec]
    digest: str  # over deck + references

    @property
    def name(self) -> str:
        return self.public.name

    @property
    def version(self) -> str:
        return self.public.version

    def spec_keys(self) -> list[str]:
        return sorted(self.public.specs)

    def spec(self, key: str) -> Spec:
        return self.public.specs[key].spec

    def draw(self, seed: int, holes: int) -> list[str]:
        """The seeded draw: which specs a match plays, in order."""
        keys = self.spec_keys()
        if not 1 <= holes <= len(keys):
            raise DeckError(f"holes must be between 1 and {len(keys)}, got {holes}")
        return random.Random(seed).sample(keys, holes)


def _read(path: Path) -> bytes:
    try:
        return path.read_bytes()
    except FileNotFoundError:
        raise DeckError(f"{path}: missing") from None
    except OSError as exc:
        raise DeckError(f"{path}: cannot read ({exc.strerror})") from None


def _decode(path: Path, kind: type) -> Any:
    try:
        return msgspec.json.decode(_read(path), type=kind)
    except (msgspec.DecodeError, RecursionError) as exc:
        raise DeckError(f"{path}: {exc}") from None


def _source(path: Path) -> str:
    try:
        return _read(path).decode("utf-8")
    except UnicodeDecodeError as exc:
        raise DeckError(f"{path}: not UTF-8 ({exc.reason} at byte {exc.start})") from None


def _check_values(path: Path, field: str, items: list[Example] | list[BaselineTest]) -> None:
    for i, item in enumerate(items):
        for part in ("args", "expect"):
            try:
                values.canonical(getattr(item, part))
            except values.NotAValue as exc:
                raise DeckError(f"{path}: {field}[{i}].{part}: {exc}") from None


def _spec_dirs(root: Path) -> list[Path]:
    if not root.is_dir():
        raise DeckError(f"{root}: not a directory")
    return sorted(p for p in root.iterdir() if p.is_dir() and not p.name.startswith((".", "_")))


def _digest(root: Path, files: list[Path], h: Any) -> None:
    for path in sorted(files):
        rel = path.relative_to(root).as_posix()
        data = _read(path)
        h.update(f"{rel}\0{len(data)}\0".encode())
        h.update(data)


def _pack_files(root: Path) -> list[Path]:
    return [p for p in root.rglob("*") if p.is_file() and "__pycache__" not in p.parts]


def load_public(deck_dir: Path = DEFAULT_DECK) -> PublicDeck:
    deck_dir = Path(deck_dir)
    info = _decode(deck_dir / "pack.json", PackInfo)
    specs: dict[str, PublicSpec] = {}
    for d in _spec_dirs(deck_dir):
        spec_path = d / "spec.json"
        spec = _decode(spec_path, Spec)
        validate_spec(spec_path, spec, d.name)
        bl_path = d / "baselines.json"
        plays = _decode(bl_path, Baselines)
        baselines = {}
        for name in BASELINES:
            play: BaselinePlay = getattr(plays, name)
            if len(play.tests) != BASELINE_TESTS:
                raise DeckError(
                    f"{bl_path}: {name}.tests: expected {BASELINE_TESTS} tests, "
                    f"got {len(play.tests)}"
                )
            _check_values(bl_path, f"{name}.tests", play.tests)
            impl = _source(d / f"{name}.py")
            baselines[name] = Baseline(impl=impl, tests=tuple(play.tests), note=play.note)
        specs[spec.key] = PublicSpec(spec=spec, baselines=baselines)
    if not specs:
        raise DeckError(f"{deck_dir}: no specs")
    h = hashlib.sha256(b"cogolf-deck\0")
    _digest(deck_dir, _pack_files(deck_dir), h)
    return PublicDeck(info.name, info.version, specs, "sha256:" + h.hexdigest())


def validate_spec(path: Path, spec: Spec, dirname: str) -> None:
    if spec.key != dirname:
        raise DeckError(f"{path}: key {spec.key!r} does not match directory {dirname!r}")
    if not spec.title or len(spec.title) > MAX_TITLE_CHARS:
        raise DeckError(f"{path}: title must be 1..{MAX_TITLE_CHARS} chars, has {len(spec.title)}")
    if not spec.prompt or len(spec.prompt) > MAX_PROMPT_CHARS:
        raise DeckError(
            f"{path}: prompt must be 1..{MAX_PROMPT_CHARS} chars, has {len(spec.prompt)}"
        )
    if not spec.signature.function.isidentifier():
        raise DeckError(f"{path}: signature.function is not an identifier")
    for i, p in enumerate(spec.signature.params):
        if not p.name.isidentifier():
            raise DeckError(f"{path}: signature.params[{i}].name is not an identifier")
    if len(spec.examples) != EXAMPLES_PER_SPEC:
        raise DeckError(f"{path}: examples: expected {EXAMPLES_PER_SPEC}, got {len(spec.examples)}")
    _check_values(path, "examples", spec.examples)
    for i, ex in enumerate(spec.examples):
        if len(ex.args) != len(spec.signature.params):
            raise DeckError(f"{path}: examples[{i}].args: arity does not match the signature")


def load(deck_dir: Path = DEFAULT_DECK, references_dir: Path = DEFAULT_REFERENCES) -> Deck:
    deck_dir, references_dir = Path(deck_dir), Path(references_dir)
    public = load_public(deck_dir)
    info = _decode(references_dir / "pack.json", PackInfo)
    if (info.name, info.version) != (public.name, public.version):
        raise DeckError(
            f"{references_dir / 'pack.json'}: pack {info.name} {info.version} does not match "
            f"deck {public.name} {public.version}"
        )
    hidden: dict[str, HiddenSpec] = {}
    dirs = {d.name: d for d in _spec_dirs(references_dir)}
    for key in sorted(public.specs):
        d = dirs.pop(key, None)
        if d is None:
            raise DeckError(f"{references_dir}: no references for spec {key!r}")
        h_path = d / "hidden.json"
        data = _decode(h_path, Hidden)
        if len(data.par) != PAR_CASES_PER_SPEC:
            raise DeckError(f"{h_path}: par: expected {PAR_CASES_PER_SPEC}, got {len(data.par)}")
        _check_values(h_path, "par", data.par)
        if not data.ambiguity or "\n" in data.ambiguity:
            raise DeckError(f"{h_path}: ambiguity must be one non-empty line")
        hidden[key] = HiddenSpec(
            reference=_source(d / "reference.py"), par=tuple(data.par), ambiguity=data.ambiguity
        )
    if dirs:
        raise DeckError(f"{references_dir}: references without a spec: {sorted(dirs)}")
    h = hashlib.sha256(b"cogolf-pack\0")
    _digest(deck_dir, _pack_files(deck_dir), h)
    h.update(b"\0references\0")
    _digest(references_dir, _pack_files(references_dir), h)
    return Deck(public=public, hidden=hidden, digest="sha256:" + h.hexdigest())
