"""Loading and validating the 18 golf holes.

The public half (`deck/golf/`) holds what a player may see: description,
difficulty, signature and public tests. The private half (`references/golf/`)
holds the private tests used only for scoring. Every structural problem is a
`GolfDataError` naming the file and the field.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

import msgspec

from cogolf import values
from cogolf.games.golf.types import GolfType, TypeSyntaxError, check_value, parse_type

ROOT = Path(__file__).resolve().parents[3]
DEFAULT_DECK = ROOT / "deck" / "golf"
DEFAULT_REFERENCES = ROOT / "references" / "golf"

DIFFICULTIES = ("easy", "medium", "hard")
DEFAULT_PENALTY = 1000.0
HOLES_PER_COURSE = 18


class GolfDataError(ValueError):
    """Golf data that cannot be used; the message names the file and the field."""


class _Param(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    type: str


class _Test(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    args: list[Any]
    expect: Any


class _PublicHole(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str
    title: str
    difficulty: str
    description: str
    params: list[_Param]
    returns: str
    public: list[_Test]
    penalty: float = DEFAULT_PENALTY


class _PrivateHole(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    key: str
    private: list[_Test]


class _CourseIndex(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    version: str
    holes: list[str]


class _ReferenceIndex(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    name: str
    version: str


@dataclass(frozen=True)
class Test:
    name: str  # "public-0", "private-3": stable ids for per-test detail
    args: tuple[Any, ...]
    expect: values.Value

    @property
    def public(self) -> bool:
        return self.name.startswith("public-")


@dataclass(frozen=True)
class Param:
    name: str
    type: GolfType


@dataclass(frozen=True)
class Hole:
    key: str
    title: str
    difficulty: str
    description: str
    params: tuple[Param, ...]
    returns: GolfType
    penalty: float
    public: tuple[Test, ...]
    private: tuple[Test, ...]

    @property
    def scoring(self) -> tuple[Test, ...]:
        """The scoring set: public and private tests together."""
        return self.public + self.private


@dataclass(frozen=True)
class HoleSet:
    name: str
    version: str
    holes: tuple[Hole, ...]  # in course order

    def by_key(self) -> dict[str, Hole]:
        return {h.key: h for h in self.holes}

    def hole(self, key: str) -> Hole:
        for h in self.holes:
            if h.key == key:
                return h
        raise KeyError(key)


def _decode(path: Path, kind: type[Any]) -> Any:
    try:
        raw = path.read_bytes()
    except OSError as exc:
        raise GolfDataError(f"{path}: cannot read ({exc.strerror})") from exc
    try:
        return msgspec.json.decode(raw, type=kind)
    except msgspec.ValidationError as exc:
        raise GolfDataError(f"{path}: {exc}") from exc
    except msgspec.DecodeError as exc:
        raise GolfDataError(f"{path}: not valid JSON ({exc})") from exc


def _tests(
    path: Path, field: str, raw: list[_Test], params: tuple[Param, ...], returns: GolfType
) -> tuple[Test, ...]:
    out = []
    for i, t in enumerate(raw):
        where = f"{path}: {field}[{i}]"
        if len(t.args) != len(params):
            raise GolfDataError(
                f"{where}.args: {len(t.args)} arguments, signature has {len(params)}"
            )
        for j, (arg, p) in enumerate(zip(t.args, params, strict=True)):
            why = check_value(p.type, arg, f"args[{j}]")
            if why:
                raise GolfDataError(f"{where}.{why}")
        why = check_value(returns, t.expect, "expect")
        if why:
            raise GolfDataError(f"{where}.{why}")
        out.append(Test(f"{field}-{i}", tuple(t.args), values.canonical(t.expect)))
    return tuple(out)


def _type(path: Path, field: str, text: str) -> GolfType:
    try:
        return parse_type(text)
    except TypeSyntaxError as exc:
        raise GolfDataError(f"{path}: {field}: {exc}") from exc


def load_holes(deck: Path = DEFAULT_DECK, references: Path = DEFAULT_REFERENCES) -> HoleSet:
    """Load both halves and check they agree; raises GolfDataError."""
    index = _decode(deck / "course.json", _CourseIndex)
    ref_index = _decode(references / "course.json", _ReferenceIndex)
    if (index.name, index.version) != (ref_index.name, ref_index.version):
        raise GolfDataError(
            f"{references / 'course.json'}: version {ref_index.version!r} does not match "
            f"the deck's {index.version!r}"
        )
    if len(index.holes) != HOLES_PER_COURSE or len(set(index.holes)) != len(index.holes):
        raise GolfDataError(
            f"{deck / 'course.json'}: holes: expected {HOLES_PER_COURSE} distinct keys, "
            f"got {len(index.holes)}"
        )
    holes = []
    for key in index.holes:
        ppath, rpath = deck / f"{key}.json", references / f"{key}.json"
        pub = _decode(ppath, _PublicHole)
        prv = _decode(rpath, _PrivateHole)
        for path, got in ((ppath, pub.key), (rpath, prv.key)):
            if got != key:
                raise GolfDataError(f"{path}: key: {got!r} does not match the file name")
        if pub.difficulty not in DIFFICULTIES:
            raise GolfDataError(
                f"{ppath}: difficulty: {pub.difficulty!r} not one of {DIFFICULTIES}"
            )
        if not pub.penalty > 0:
            raise GolfDataError(f"{ppath}: penalty: must be positive")
        if not pub.public or not prv.private:
            raise GolfDataError(f"{ppath}: a hole needs public and private tests")
        params = tuple(
            Param(p.name, _type(ppath, f"params[{i}].type", p.type))
            for i, p in enumerate(pub.params)
        )
        returns = _type(ppath, "returns", pub.returns)
        holes.append(
            Hole(
                key=key,
                title=pub.title,
                difficulty=pub.difficulty,
                description=pub.description,
                params=params,
                returns=returns,
                penalty=float(pub.penalty),
                public=_tests(ppath, "public", pub.public, params, returns),
                private=_tests(rpath, "private", prv.private, params, returns),
            )
        )
    return HoleSet(index.name, index.version, tuple(holes))
