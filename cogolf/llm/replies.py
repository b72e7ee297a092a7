"""Reading a model's reply into a play, and checking it the way the server will.

Models wrap JSON in code fences and prose; the parser looks for the object in
the whole text, then in each fenced block, then from each `{`. What it finds is
validated by the server's own intake (`engine.intake.accept`), so a play
accepted here is one the server accepts, and a refusal carries the server's
exact, path-precise message. A golf source is checked against the cap the
observation's rules announce (the bot runtime then runs golf's own intake).
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable
from typing import Any

from cogolf.engine.intake import Rejected, accept, encode_play

FENCE = re.compile(r"```[^\n`]*\n(.*?)(?:\n)?```", re.DOTALL)
PLAY_KEYS = ("impl", "tests", "note")
# A play fits in a 16 KiB message; a reply far beyond that is refused before any
# scan, and at most MAX_STARTS `{` are tried, so a hostile reply costs little CPU.
MAX_REPLY_CHARS = 200_000
MAX_STARTS = 200


class ReplyError(ValueError):
    """A reply that is not a valid play; the message is what the model is told."""


def _candidates(text: str) -> list[str]:
    return [text.strip(), *(m.group(1) for m in FENCE.finditer(text))]


def find_object(text: str) -> dict[str, Any]:
    """The first JSON object in `text` that has an `impl` key."""
    if len(text) > MAX_REPLY_CHARS:
        raise ReplyError(f"the reply is {len(text)} characters; a play fits in far fewer")
    first_error = ""
    for candidate in _candidates(text):
        try:
            value = json.loads(candidate)
        except RecursionError:
            raise ReplyError("the reply's JSON is nested too deeply") from None
        except ValueError as exc:
            first_error = first_error or f"{exc}"
            continue
        if isinstance(value, dict) and "impl" in value:
            return value
    decoder = json.JSONDecoder()
    for n, found in enumerate(re.finditer(r"\{", text)):
        if n == MAX_STARTS:
            break
        try:
            value, _ = decoder.raw_decode(text, found.start())
        except (ValueError, RecursionError):
            continue
        if isinstance(value, dict) and "impl" in value:
            return value
    if first_error:
        raise ReplyError(f"no JSON object with an impl key found; the reply's JSON: {first_error}")
    raise ReplyError("no JSON object with an impl key found")


def cogolf_play(
    text: str, hole: int, clean: Callable[[Any], Any] = lambda value: value
) -> dict[str, Any]:
    """The play `{impl, tests, note}` in a reply, accepted by the server's intake for `hole`.
    `clean` rewrites the decoded values first (the player redacts the key), so what is
    checked is what is played."""
    found = find_object(text)
    play = {key: clean(found[key]) for key in PLAY_KEYS if key in found}
    encoded = encode_play({"type": "submission", "hole": hole, **play})
    if isinstance(encoded, Rejected):
        raise ReplyError(encoded.message)
    verdict = accept(encoded, hole)
    if isinstance(verdict, Rejected):
        raise ReplyError(verdict.message)
    return play


def golf_source(text: str, max_bytes: int) -> str:
    """The source in a reply: the first fenced block's content, else the reply as it is.

    The newline before the closing fence belongs to the fence (a model could not
    leave it out), so it is not counted as a byte of the source.
    """
    fenced = FENCE.search(text)
    source = fenced.group(1) if fenced else text
    size = len(source.encode("utf-8", "surrogatepass"))
    if size > max_bytes:
        raise ReplyError(f"source is {size} bytes; the cap is {max_bytes}")
    if not source.strip():
        raise ReplyError("the source is empty")
    return source
