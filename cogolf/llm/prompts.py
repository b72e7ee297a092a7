"""What the model is told: the rules, the hole, and what happened so far.

Only what the observation carries goes in (aliases, never real names). The
legality verdicts of the seat's own earlier tests are spelt out, above all
`ref_mismatch`: the hidden reference disagreed with the test, so the reading
behind it is not the real one.
"""

from __future__ import annotations

import json
from typing import Any

COGOLF_SYSTEM = """\
You play Cogolf, a two-player code game. Each hole shows a spec whose prompt is ambiguous in \
exactly one clause. Both players submit, at the same time, a Python implementation of \
`solve(...)` and up to {max_tests} tests. A hidden reference implementation decides which \
reading is the real one: a test is legal only if the reference returns its `expect` for its \
`args`. Your legal tests are run against your opponent's code (a failure is a breach, +1 for \
you); theirs against yours. A hidden par suite of four cases also audits each implementation \
(a failed case is +1 for the opponent). So: implement the reading the reference most likely \
takes, and write tests that pin down that reading where a careless reader would go wrong.

Rules and caps (exceeding a cap invalidates or cuts your play):
{rules}

Reply with one JSON object and nothing else:
{{"impl": "def solve(...):\\n    ...", "tests": [{{"name": "...", "args": [...], "expect": ..., \
"why": "..."}}], "note": "..."}}
`args` is the list of positional arguments; `expect` the return value, as JSON. impl at most \
{max_impl} characters, name {max_name}, why {max_why}, note {max_note}; args and expect at most \
{max_args} characters of compact JSON each. The program may not import os, socket, threading \
or ctypes, nor read or write files."""

VERDICTS = {
    "ref_mismatch": (
        "ILLEGAL: the reference returns something else, so that reading is NOT the real one"
    ),
    "ref_error": "ILLEGAL: the reference raised on these args",
    "ref_timeout": "ILLEGAL: the reference timed out",
    "not_json": "ILLEGAL: not JSON values",
    "arity": "ILLEGAL: wrong number of arguments",
    "oversize": "ILLEGAL: over the size cap",
    "duplicate": "ILLEGAL: duplicate of an earlier test",
}


def _json(value: Any) -> str:
    return json.dumps(value, ensure_ascii=False, separators=(",", ":"))


def cogolf_system(rules: dict[str, Any]) -> str:
    return COGOLF_SYSTEM.format(
        rules=json.dumps(rules, indent=1, ensure_ascii=False),
        max_tests=rules.get("max_tests", 5),
        max_impl=rules.get("max_impl_chars", 4000),
        max_name=rules.get("max_name_chars", 40),
        max_why=rules.get("max_why_chars", 120),
        max_note=rules.get("max_note_chars", 200),
        max_args=rules.get("max_args_chars", 400),
    )


def _history(entries: list[dict[str, Any]]) -> list[str]:
    lines: list[str] = []
    for h in entries:
        lines.append(
            f"Hole {h.get('hole')} ({h.get('spec_key')}): your hole score {h.get('hole_score')}, "
            f"your par fails {h.get('your_par_fails')}, theirs {h.get('their_par_fails')}"
            + (" (you missed it: the fallback played for you)" if h.get("your_fallback") else "")
        )
        for t in h.get("your_tests", []):
            verdict = (
                "legal"
                if t.get("legal")
                else VERDICTS.get(t.get("legal_reason", ""), f"ILLEGAL: {t.get('legal_reason')}")
            )
            lines.append(
                f"  your test {t.get('name')!r} args={_json(t.get('args'))} "
                f"expect={_json(t.get('expect'))}: {verdict}; against them: {t.get('outcome')}"
            )
        for t in h.get("their_tests", []):
            lines.append(
                f"  their test {t.get('name')!r} args={_json(t.get('args'))} "
                f"expect={_json(t.get('expect'))} ({t.get('why')}): {t.get('outcome')}, "
                f"your code returned {t.get('your_result')}"
            )
        if h.get("their_note"):
            lines.append(f"  their note: {h['their_note']}")
    return lines


def cogolf_user(observation: dict[str, Any]) -> str:
    spec = observation.get("spec", {})
    sig = spec.get("signature", {})
    params = ", ".join(f"{p.get('name')}: {p.get('type')}" for p in sig.get("params", []))
    you, them = observation.get("you", {}), observation.get("opponent", {})
    parts = [
        f"Hole {observation.get('hole')} of {observation.get('holes')}. You are "
        f"{you.get('alias')} (score {you.get('score')}), your opponent is "
        f"{them.get('alias')} (score {them.get('score')}).",
        "",
        f"Spec {spec.get('key')}: {spec.get('title')}",
        str(spec.get("prompt", "")),
        f"Signature: def {sig.get('function', 'solve')}({params}) -> {sig.get('returns')}",
        "Examples:",
        *(
            f"  args={_json(e.get('args'))} -> {_json(e.get('expect'))}"
            for e in spec.get("examples", [])
        ),
    ]
    history = observation.get("history") or []
    if history:
        parts += ["", "What happened on the last holes (the verdicts say which readings are real):"]
        parts += _history(history)
    parts += ["", "Your play, as one JSON object:"]
    return "\n".join(parts)


GOLF_SYSTEM = """\
You play code golf: solve each task in as few bytes of source as possible. The score of a \
hole is the file's byte count plus a penalty for failed tests, so correctness comes first. \
Reply with the complete source file in one fenced code block and nothing else; the block's \
content is the file, byte for byte."""


def golf_user(observation: dict[str, Any]) -> str:
    task = observation.get("task", {})
    rules = observation.get("rules", {})
    tests = [
        f"  f({', '.join(_json(a) for a in t.get('args', []))}) == {_json(t.get('expect'))}"
        for t in task.get("public_tests", [])
    ]
    return "\n".join(
        [
            f"Hole {observation.get('hole')} of {observation.get('holes')}, course "
            f"{observation.get('course')}: {task.get('title')} ({task.get('difficulty')})",
            f"Language: {rules.get('language')}. "
            f"{observation.get('contract') or rules.get('contract')}",
            f"Signature: {task.get('signature')}",
            f"File: {task.get('file_name')}, at most {rules.get('max_source_bytes')} bytes.",
            "",
            str(task.get("description", "")),
            "",
            "Public tests:",
            *tests,
            "",
            "Your source, in one fenced code block:",
        ]
    )
