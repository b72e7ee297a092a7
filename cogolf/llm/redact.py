"""Cutting the API key out of whatever a provider sends back, in the forms an echo takes.

A provider (or a proxy in front of it) that echoes the request can hand the key
back in the reply, and the reply becomes a public play. An echo is rarely the
raw key: a reply that is JSON writes it with `\\u0073` escapes, a URL with `%73`,
HTML with `&#115;`, a Basic auth header in base64. So the key is matched in each
of those encodings, with every character of it allowed to be written raw or
escaped (JSON/Python/JavaScript `\\uXXXX`, `\\xXX`, `\\U`, `\\u{..}`, octal,
`\\/`; percent-encoding; HTML numeric entities), case-insensitively: in base64
(standard and URL-safe, at each of the three alignments it can start at) and in
hex. Every string of a parsed reply is redacted after decoding, so an escape
that only the JSON parser resolves is caught too.

Not covered, and not coverable: a provider that means to publish the key can
always encode it some other way (reversed, split across fields, encrypted); it
has the key already. This stops echoes, not a provider set on leaking.
"""

from __future__ import annotations

import base64
import re
from typing import Any

REDACTED = "[redacted]"
MIN_SECRET = 4  # shorter "keys" would match ordinary text
MIN_ENCODED = 16  # base64 and hex of shorter keys are too short to be told from text
SHOWN_CHARS = 300  # of a provider's message in an error or a log line
# Of a message, only this much is redacted before it is cut to SHOWN_CHARS: an echo that
# starts in the part shown is cut out unless its encoding is over 16,000 characters long
# (a 100,000-character error body costs a 16 KiB pass, not a 100 KiB one).
SHOWN_WINDOW = 16_384
# Control characters (C0, DEL, C1) and line/paragraph separators: a provider's text
# must not start a new log line or drive the operator's terminal.
_CONTROL = re.compile("[\x00-\x1f\x7f-\x9f\u2028\u2029]")


def _char(c: str) -> str:
    """A pattern for one character written raw or escaped in any of the usual ways, and
    escaped again any number of times (a JSON string holding JSON, a URL inside a URL):
    a backslash escape may have a run of backslashes, `%` may be `%25`, `&` may be
    `&amp;`."""
    o = ord(c)
    # Possessive, and a backslash run matched from its start only: no input makes the
    # search go back over what it read (a run of backslashes would cost quadratic time).
    esc, pct, amp = r"(?<!\\)\\++", "%(?:25)*+", "&(?:amp;)*+"
    forms = [re.escape(c), rf"{esc}u\{{0*+{o:x}\}}", rf"{esc}U{o:08x}"]
    if o <= 0xFFFF:
        forms.append(rf"{esc}u{o:04x}")
    else:  # JSON writes it as a surrogate pair
        hi, lo = 0xD800 + ((o - 0x10000) >> 10), 0xDC00 + ((o - 0x10000) & 0x3FF)
        forms.append(rf"{esc}u{hi:04x}{esc}u{lo:04x}")
    if o <= 0xFF:
        forms += [rf"{esc}x{o:02x}", rf"{esc}{o:03o}"]
    if c in "/\"'":
        forms.append(esc + re.escape(c))
    forms.append("".join(f"{pct}{b:02x}" for b in c.encode("utf-8", "surrogatepass")))
    forms += [rf"{amp}#0*+{o};?", rf"{amp}#x0*+{o:x};?"]
    return "(?:" + "|".join(forms) + ")"


def _base64_cores(secret: bytes) -> list[str]:
    """The part of the key's base64 that does not depend on what precedes or follows it,
    for each of the three alignments the key can start at."""
    cores = []
    for pad in range(3):
        encoded = base64.b64encode(b"\0" * pad + secret).decode()
        start = -(-8 * pad // 6)  # the first character made of key bits only
        end = 8 * (pad + len(secret)) // 6  # the last such, plus one
        core = encoded[start:end]
        cores += [core, core.replace("+", "-").replace("/", "_")]
    return cores


def encodings(secret: str) -> list[str]:
    """The texts an echo of `secret` may show, each to be matched character by character."""
    forms = [secret]
    raw = secret.encode("utf-8", "surrogatepass")
    if len(secret) >= MIN_ENCODED:
        forms += [*_base64_cores(raw), raw.hex()]
    return list(dict.fromkeys(forms))


class Redactor:
    """Removes the key (when there is one) from any text or value before it is written,
    logged, played or shown."""

    def __init__(self, secret: str | None) -> None:
        self.pattern: re.Pattern[str] | None = None
        if secret and len(secret) >= MIN_SECRET:
            forms = ("".join(_char(c) for c in form) for form in encodings(secret))
            self.pattern = re.compile("|".join(forms), re.IGNORECASE)

    def __call__(self, text: str) -> str:
        return self.pattern.sub(REDACTED, text) if self.pattern is not None else text

    def value(self, value: Any) -> Any:
        """`value` (decoded JSON: dicts, lists, strings, numbers) with every string redacted,
        keys included."""
        if self.pattern is None:
            return value
        if isinstance(value, str):
            return self(value)
        if isinstance(value, dict):
            return {self.value(k): self.value(v) for k, v in value.items()}
        if isinstance(value, list | tuple):
            return [self.value(v) for v in value]
        return value

    def shown(self, text: str) -> str:
        """`text` fit for one line of an error or a log: redacted, then escaped and cut."""
        cut = len(text) > SHOWN_WINDOW
        text = _CONTROL.sub(lambda m: repr(m.group())[1:-1], self(text[:SHOWN_WINDOW]))
        return text if len(text) <= SHOWN_CHARS and not cut else text[:SHOWN_CHARS] + "..."
