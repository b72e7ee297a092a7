"""The view model and its renderings take any records without failing: every field a
page shows comes from a bot or from a file anyone may edit."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from cogolf.pages.explain import explain
from cogolf.pages.render import render_match, render_standalone
from cogolf.pages.view import PageError, build_view, decode_lines, view_from_file
from tests.pages.conftest import deep

KINDS = ["header", "hole_start", "submission", "test_verdict", "par_result", "hole_score",
         "episode_end", "result", "other"]  # fmt: skip
FIELDS = ["hole", "slot", "aliases", "names", "config", "score", "cumulative", "source",
          "impl", "tests", "outcome", "legal", "args", "expect", "observed", "winner",
          "killer_test", "scores", "fallback_causes", "game", "result", "total", "key",
          "spec_key", "ambiguity", "errors"]  # fmt: skip
scalars = st.none() | st.booleans() | st.integers(-5, 5) | st.floats() | st.text(max_size=8)
json_values = st.recursive(
    scalars,
    lambda inner: (
        st.lists(inner, max_size=3) | st.dictionaries(st.sampled_from(FIELDS), inner, max_size=3)
    ),
    max_leaves=12,
)
records = st.lists(
    st.fixed_dictionaries({"kind": st.sampled_from(KINDS)}).flatmap(
        lambda base: st.dictionaries(st.sampled_from(FIELDS), json_values, max_size=6).map(
            lambda rest: {**rest, **base}
        )
    ),
    max_size=12,
)


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(records, st.booleans())
def test_any_records_render_or_are_refused_never_crash(
    recs: list[dict[str, Any]], golf: bool
) -> None:
    if golf and recs:
        recs[0]["game"] = "golf"
    view = build_view(recs)
    if view is None:
        return
    assert "<script" in render_match(view, live=True)
    render_standalone(view)
    explain(view)


def test_a_header_claiming_a_billion_holes_draws_a_bounded_page() -> None:
    for game in ("cogolf", "golf"):
        view = build_view(
            [{"kind": "header", "game": game, "holes": 10**9, "config": {"holes": 10**9}}]
        )
        assert view is not None and view.holes_total == 1000
        assert len(render_match(view)) < 500_000


def test_a_match_under_way_never_shows_names_or_ambiguity_whatever_its_records_hold() -> None:
    recs = [
        {"kind": "header", "match_id": "m-1", "aliases": ["Ash", "Basil"],
         "names": ["real-0", "real-1"], "config": {"holes": 2}},
        {"kind": "hole_start", "hole": 1, "spec_key": "k"},
        {"kind": "hole_score", "hole": 1, "score": [1, -1], "cumulative": [1, -1],
         "ambiguity": "the hidden note"},
    ]  # fmt: skip
    view = build_view(recs)
    assert view is not None and view.names is None and view.holes[0].ambiguity == ""
    page = render_match(view, live=True)
    assert "real-0" not in page and "the hidden note" not in page
    text = explain(view)
    assert "real-0" not in text and "the hidden note" not in text


def test_a_journal_nesting_too_deep_is_refused_naming_its_line(tmp_path: Path) -> None:
    path = tmp_path / "deep-1.ndjson"
    path.write_text('{"kind":"header"}\n{"kind":"hole_start","x":' + "[" * 150 + "]" * 150 + "}\n")
    try:
        view_from_file(path)
    except PageError as exc:
        assert str(exc) == f"{path}:2: nesting deeper than 100"
    else:
        raise AssertionError("a 150-deep line was read")
    # 60 deep is a value like any other: shown, cut to a bounded text
    recs = decode_lines(
        b'{"kind":"header","aliases":["a","b"],"config":{"holes":1}}\n'
        b'{"kind":"hole_start","hole":1,"spec_key":"k"}\n'
        b'{"kind":"submission","hole":1,"slot":0,"impl":"x"}\n'
        + f'{{"kind":"test_verdict","hole":1,"slot":0,"args":{deep(60)},"legal":true}}\n'.replace(
            "'", '"'
        ).encode()
    )
    view = build_view(recs)
    assert view is not None and view.holes[0].plays[0].shots[0].args.startswith("[[[[")


def test_values_that_differ_only_in_invisible_characters_never_look_the_same() -> None:
    recs = [
        {"kind": "header", "match_id": "m-1", "aliases": ["Ash", "Basil"], "config": {"holes": 1}},
        {"kind": "hole_start", "hole": 1, "spec_key": "k"},
        {"kind": "submission", "hole": 1, "slot": 0, "impl": "x"},
        {"kind": "test_verdict", "hole": 1, "slot": 0, "idx": 0, "name": "em space",
         "args": ["k\u2003l"], "expect": "k\u2003l", "legal": True, "legal_reason": "ok",
         "outcome": "breach", "observed": '"k l"'},
        {"kind": "test_verdict", "hole": 1, "slot": 0, "idx": 1, "name": "two spaces",
         "args": ["a  b"], "expect": "a  b", "legal": True, "legal_reason": "ok",
         "outcome": "breach", "observed": '"a b"'},
        {"kind": "hole_score", "hole": 1, "score": [2, -2], "cumulative": [2, -2]},
    ]  # fmt: skip
    view = build_view(recs)
    assert view is not None
    shots = view.holes[0].plays[0].shots  # type: ignore[union-attr]
    assert (shots[0].expect, shots[0].observed) == ('"k\\u2003l"', '"k l"')
    page = render_match(view)
    assert "<code>&#34;k\\u2003l&#34;</code>" in page and "<code>&#34;a  b&#34;</code>" in page
    text = explain(view)
    assert '"a  b"' in text and '"k\\u2003l"' in text
