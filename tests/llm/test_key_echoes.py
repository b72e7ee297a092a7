"""A provider echoing the key in the encodings an echo takes (JSON `\\u` escapes above
all) gets it into no play, replay, page, log or transcript: a real `cogolf serve`, two
`cogolf bot --llm` seats on the real clients, and every file and page searched for the
key decoded every way it could be written."""

from __future__ import annotations

import base64
import codecs
import html
import json
import re
import subprocess
import sys
import warnings
from collections.abc import Iterator
from pathlib import Path
from typing import Any
from urllib.parse import unquote

import httpx
import msgspec
import pytest

from cogolf.llm import prompts
from cogolf.llm.fake import Call, FakeProvider, Step
from cogolf.llm.player import LLMPlayer
from cogolf.llm.redact import REDACTED, SHOWN_WINDOW, Redactor
from cogolf.llm.transcript import transcript_path
from tests.llm.helpers import DECK, KEY, KEY_ENV, all_text, config, observation, write_config
from tests.llm.test_end_to_end import ROOT, bot, records, serve


def u_escaped(text: str, upper: bool = False) -> str:
    """`text` as JSON `\\uXXXX` escapes, as a JSON writer escaping everything would put it."""
    return "".join(f"\\u{ord(c):04X}" if upper else f"\\u{ord(c):04x}" for c in text)


# Each form as it stands in the reply's JSON text (a backslash there is written twice
# when the decoded string is to hold one).
FORMS = {
    "json_u": u_escaped(KEY),
    "json_u_upper_mixed": "".join(c if i % 3 else f"\\u{ord(c):04X}" for i, c in enumerate(KEY)),
    "python_x": "".join(f"\\\\x{ord(c):02x}" for c in KEY),  # decoded: \x73\x6b...
    "percent": "".join(f"%{ord(c):02X}" for c in KEY),
    "html": "".join(f"&#{ord(c)};" for c in KEY),
    "basic_auth": base64.b64encode(b"user:" + KEY.encode()).decode(),
    "hex": KEY.encode().hex(),
}


def play_for(call: Call) -> dict[str, Any] | None:
    """The pedant's play for the prompt's spec, with the key echoed into every field."""
    found = re.search(r"^Spec (\S+):", call.prompt(), re.M)
    if not found or found.group(1) not in DECK.specs:
        return None
    b = DECK.specs[found.group(1)].baselines["pedant"]
    tests = [{"name": t.name, "args": t.args, "expect": t.expect, "why": t.why} for t in b.tests]
    tests[0]["name"] = "KEYNAME"
    tests[0]["why"] = "because KEYHTML"
    tests[-1]["expect"] = {"KEYHEX": ["KEYPERCENT", "KEYBASIC"]}
    impl = b.impl + "\n# KEYPY\n"
    return {"impl": impl, "note": "KEYNOTE", "tests": tests}


def echo(call: Call) -> Step:
    """Hole 1 and every re-ask: the play with the key written into it. Any other first
    ask: prose with the key, so the model is asked again (the transcript keeps both)."""
    play = play_for(call)
    if play is None:
        return Step("```python\nf=lambda*a:0\n```")
    if "cannot be played" not in call.prompt() and "Hole 1 of " not in call.prompt():
        return Step(f"my key is {FORMS['json_u']} and {FORMS['percent']}, no play", finish=KEY)
    text = json.dumps(play)
    for marker, form in (
        ("KEYNAME", FORMS["json_u"]),
        ("KEYNOTE", FORMS["json_u_upper_mixed"]),
        ("KEYPY", FORMS["python_x"]),
        ("KEYHTML", FORMS["html"]),
        ("KEYHEX", FORMS["hex"]),
        ("KEYPERCENT", FORMS["percent"]),
        ("KEYBASIC", FORMS["basic_auth"]),
    ):
        text = text.replace(marker, form)
    # The stop reason is the provider's text too, and reaches the seat's log line.
    return Step("Here is my play:\n```json\n" + text + "\n```\n", finish=KEY)


def decodings(text: str) -> Iterator[str]:
    """`text` and what each usual decoding makes of it."""
    yield text
    yield html.unescape(text)
    yield unquote(text)
    with warnings.catch_warnings():  # an odd escape in the text is no leak
        warnings.simplefilter("ignore", DeprecationWarning)
        yield codecs.decode(text.encode("ascii", "backslashreplace"), "unicode_escape", "replace")
    digits = "".join(re.findall(r"[0-9a-fA-F]{2}", text))
    yield bytes.fromhex(digits).decode("utf-8", "replace")
    for chunk in re.findall(r"[A-Za-z0-9+/=_-]{20,}", text):
        for decode in (base64.b64decode, base64.urlsafe_b64decode):
            try:
                decoded = decode(chunk + "=" * (-len(chunk) % 4)).decode("utf-8", "replace")
            except ValueError:
                continue
            yield decoded


def strings(value: Any) -> Iterator[str]:
    if isinstance(value, str):
        yield value
    elif isinstance(value, dict):
        for k, v in value.items():
            yield k
            yield from strings(v)
    elif isinstance(value, list):
        for v in value:
            yield from strings(v)


def leaks(data: bytes) -> list[str]:
    """Where the key shows in `data`: raw, in any form sent, or once any string of any
    JSON line in it is decoded."""
    text = data.decode("utf-8", "replace")
    found = [name for name, form in FORMS.items() if form in text]
    texts = [text]
    for line in text.splitlines():
        try:
            texts += strings(json.loads(line))
        except ValueError:
            continue
    for t in texts:
        for i, decoded in enumerate(decodings(t)):
            at = decoded.lower().find(KEY.lower())
            if at >= 0:
                found.append(f"decoding {i}: {decoded[max(0, at - 40) : at + 80]!r}")
    return found


@pytest.fixture
def echoing(monkeypatch: pytest.MonkeyPatch) -> Iterator[FakeProvider]:
    monkeypatch.setenv(KEY_ENV, KEY)
    with FakeProvider(respond=echo) as provider:
        yield provider


@pytest.mark.slow
def test_a_key_echoed_in_escapes_reaches_no_play_replay_page_log_or_transcript(
    echoing: FakeProvider, tmp_path: Path
):
    out = tmp_path / "out"
    out.mkdir()
    configs = [
        write_config(tmp_path / "a.toml", echoing, "openai", "echo0"),
        write_config(tmp_path / "b.toml", echoing, "anthropic", "echo1"),
    ]
    server, url = serve(out / "data", out / "serve.log")
    try:
        made = httpx.post(
            f"{url}/matches",
            json={"seed": 8, "holes": 2, "hole_deadline_seconds": 20, "names": ["gpt", "claude"]},
            timeout=30,
        ).json()
        bots = [bot(configs[s["slot"]], s["url"], out, s["slot"]) for s in made["seats"]]
        assert [b.wait(timeout=180) for b in bots] == [0, 0]
        mid = made["match_id"]
        replay = httpx.get(f"{url}/matches/{mid}/replay.ndjson", timeout=30).text
        page = httpx.get(f"{url}/matches/{mid}", headers={"accept": "text/html"}, timeout=30)
    finally:
        server.terminate()
        server.wait(timeout=30)
    assert page.status_code == 200 and "<html" in page.text.lower()
    (out / "served.ndjson").write_text(replay)
    (out / "page.html").write_text(page.text)
    replay_file = next((out / "data").rglob(f"{mid}.ndjson"))
    for args in (["--verify"], ["--html", str(out / "replay.html")]):
        shown = subprocess.run(
            [sys.executable, "-m", "cogolf", "replay", str(replay_file), *args],
            capture_output=True, text=True, timeout=300, cwd=ROOT,
        )  # fmt: skip
        assert shown.returncode == 0, shown.stdout + shown.stderr
        (out / f"replay{args[0]}.txt").write_text(shown.stdout + shown.stderr)

    # Every hole was the model's own play, with each echo met and cut out.
    subs = [r for r in records(out / "served.ndjson") if r["kind"] == "submission"]
    assert len(subs) == 4 and all(s["source"] == "seat" for s in subs)
    for s in subs:
        assert s["note"] == REDACTED
        assert s["tests"][0]["name"] == REDACTED and s["tests"][0]["why"] == f"because {REDACTED}"
        (keys, (percent, basic)), *_ = s["tests"][-1]["expect"].items()
        assert (keys, percent) == (REDACTED, REDACTED) and REDACTED in basic
        assert s["impl"].endswith(f"# {REDACTED}\n")
    transcripts = sorted((out / "llm").glob("*.ndjson"))
    assert len(transcripts) == 2
    attempts = [r for p in transcripts for r in records(p) if r["kind"] == "attempt"]
    assert len(attempts) == 6  # hole 1 once, hole 2 asked again after the prose
    assert all(a["finish"] == REDACTED for a in attempts)
    assert any(c.key == KEY for c in echoing.calls)  # the key was really sent...

    files = all_text(out)
    assert len(files) >= 10
    found = {str(p.relative_to(out)): hits for p, data in files if (hits := leaks(data))}
    assert found == {}  # ...and is in no form in any file, log or page


def test_the_redactor_meets_each_encoding_and_leaves_honest_text_alone():
    """Each form alone, in text and as a JSON value; and honest plays of the whole
    public deck come out unchanged (no false positives)."""
    r = Redactor(KEY)
    basic = base64.b64encode(b"user:" + KEY.encode()).decode()
    shifted = base64.urlsafe_b64encode(b"xy" + KEY.encode()).decode()
    for form in (
        KEY, KEY.upper(), json.dumps(KEY), u_escaped(KEY), u_escaped(KEY, upper=True),
        "".join(f"\\x{ord(c):02x}" for c in KEY), "".join(f"\\{ord(c):03o}" for c in KEY),
        "".join(f"\\u{{{ord(c):x}}}" for c in KEY), "".join(f"%{ord(c):02x}" for c in KEY),
        "".join(f"&#x{ord(c):X};" for c in KEY), "".join(f"&#{ord(c)}" for c in KEY),
        KEY.encode().hex(), KEY.encode().hex().upper(), basic, shifted,
        "".join(c if i % 2 else f"%{ord(c):02x}" for i, c in enumerate(KEY)),
    ):  # fmt: skip
        cut = r(f"<{form}>")
        assert cut.startswith("<") and REDACTED in cut and KEY not in cut, form
        assert not leaks(cut.encode()), (form, cut)
    assert r.value({KEY: [1, {"x": KEY}], "n": 2.5}) == {REDACTED: [1, {"x": REDACTED}], "n": 2.5}
    assert Redactor(None).value({"a": "b"}) == {"a": "b"}


def test_the_redactors_bounds():
    """A key of 4 characters is matched, of 3 not (it would be in ordinary text); base64
    and hex are matched from 16 characters, not 15; a message is redacted over its first
    SHOWN_WINDOW characters, so an echo starting in the part shown is cut out unless its
    encoding runs past the window (and then only backslashes are shown)."""
    assert Redactor("abcd")("<abcd>") == f"<{REDACTED}>" and Redactor("abc")("<abc>") == "<abc>"
    for length, matched in ((16, True), (15, False)):
        key = KEY[:length]
        encoded = [base64.b64encode(key.encode()).decode(), key.encode().hex()]
        assert [REDACTED in Redactor(key)(e) for e in encoded] == [matched, matched]

    def echo(run: int) -> str:  # each character behind a run of backslashes
        return "".join("\\" * run + f"u{ord(c):04x}" for c in KEY)

    r = Redactor(KEY)
    inside = "x" * 290 + echo(395)
    assert len(inside) <= SHOWN_WINDOW
    assert r.shown(inside + "y" * 100_000) == "x" * 290 + REDACTED + "..."
    past = "x" * 290 + echo(405)
    assert len(past) > SHOWN_WINDOW
    assert r.shown(past) == "x" * 290 + "\\\\" * 5 + "..."  # the first 10 backslashes only
    # Honest text: every public spec, its baseline plays and the prompts made of them,
    # as values and as JSON text.
    for key, spec in DECK.specs.items():
        doc = json.loads(msgspec.json.encode(spec))
        prompt = prompts.cogolf_user(observation(key))
        assert r.value(doc) == doc and r(json.dumps(doc)) == json.dumps(doc)
        assert r(prompt) == prompt
    system = prompts.cogolf_system({})
    assert r(system) == system and r(prompts.GOLF_SYSTEM) == prompts.GOLF_SYSTEM


def test_a_golf_source_holding_the_key_in_python_escapes_is_played_without_it(tmp_path: Path):
    """A source is played as the text it is: the key in `\\x` escapes (what a model asked
    to print it would write) and in base64 is cut from the source and the transcript."""
    obs = {
        "game": "golf", "hole": 1, "holes": 18, "course": "python",
        "task": {"title": "t", "description": "reverse s", "signature": "def f(s: str) -> str",
                 "public_tests": [{"args": ["ab"], "expect": "ba"}], "file_name": "x.py"},
        "rules": {"language": "Python 3", "max_source_bytes": 4000},
    }  # fmt: skip
    python_x = "".join(f"\\x{ord(c):02x}" for c in KEY)
    b64 = base64.b64encode(KEY.encode()).decode()
    with FakeProvider() as fake:
        fake.script("g", Step(f'```python\nf=lambda s:s[::-1]\nk="{python_x}";b="{b64}"\n```'))
        with pytest.MonkeyPatch.context() as env:
            env.setenv(KEY_ENV, KEY)
            p = LLMPlayer(config(fake, "openai", "g"))
            p.open_transcript(tmp_path, "g-1", 0)
            source = p(obs, budget=10)
    assert source.startswith("f=lambda s:s[::-1]\nk=") and source.count(REDACTED) == 2
    assert not leaks(source.encode())
    assert not leaks(transcript_path(tmp_path, "g-1", 0).read_bytes())


def test_no_reply_makes_the_redactor_read_it_twice():
    """Runs of what the patterns repeat (backslashes, `%25`, `&amp;`, zeros, near
    misses), each as long as a reply may be, are redacted in one pass: a quadratic
    search would take minutes on the first of them."""
    script = f"""
from cogolf.llm.redact import Redactor
r = Redactor({KEY!r})
near = {KEY[:-1]!r} + " "
for text in ("\\\\" * 200_000, "%25" * 66_000, "&amp;" * 40_000, "&#" + "0" * 200_000,
             "\\\\u{{" + "0" * 200_000, near * (200_000 // len(near))):
    assert r(text) == text
print("ok")
"""
    done = subprocess.run(
        [sys.executable, "-c", script], capture_output=True, text=True, timeout=60, cwd=ROOT
    )
    assert done.stdout.strip() == "ok", done.stderr
