"""Tokens of the C-like test sources twins are planted in (PHP and Go).

Enough of each language to find brackets, statements and literals without
mistaking the inside of a string or a comment for code: strings, comments and
line breaks are tokens of their own, and every token keeps its offset so an edit
can replace exactly its text. A construct this lexer does not know (a PHP
heredoc, an unterminated string) raises `LexError`: a file it cannot read gets
no twins rather than wrong ones.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

OPEN = {"(": ")", "[": "]", "{": "}"}
CLOSE = {v: k for k, v in OPEN.items()}


class LexError(ValueError):
    """The source uses something the lexer does not read; the message says what and where."""


@dataclass(frozen=True)
class Token:
    kind: str  # "word", "num", "str", "comment", "nl" or "op"
    text: str
    start: int  # offset in the source

    @property
    def end(self) -> int:
        return self.start + len(self.text)


_COMMON = [
    ("nl", r"\n"),
    ("space", r"[ \t\r\f]+"),
    ("comment", r"//[^\n]*|/\*.*?\*/"),
    ("str", r'"(?:[^"\\]|\\.)*"' + r"|'(?:[^'\\]|\\.)*'"),
    ("word", r"\$?[A-Za-z_\x80-\uffff][A-Za-z0-9_\x80-\uffff]*"),
    ("num", r"\d[\w.]*"),
    ("op", r"===|!==|<<=|>>=|\.\.\.|\?\?=|<=>|=>|->|::|\?\?|==|!=|<=|>=|&&|\|\||:=|<<|>>|"
           r"\+\+|--|[-+*/%=<>!&|^~?:;,.(){}\[\]@\\]"),
]
_PHP = [("heredoc", r"<<<"), ("comment", r"#[^\n]*"), *_COMMON]
_GO = [("str", r"`[^`]*`"), *_COMMON]


def _compile(parts: list[tuple[str, str]]) -> re.Pattern[str]:
    return re.compile("|".join(f"(?P<{k}{i}>{p})" for i, (k, p) in enumerate(parts)), re.S)


_PATTERNS = {"php": _compile(_PHP), "go": _compile(_GO)}


def tokens(text: str, language: str) -> list[Token]:
    """Every token of `text` but spaces, in order."""
    pattern = _PATTERNS[language]
    out: list[Token] = []
    at = 0
    while at < len(text):
        match = pattern.match(text, at)
        if match is None or match.lastgroup is None:
            line = text.count("\n", 0, at) + 1
            raise LexError(f"line {line}: cannot read {text[at:at + 20]!r}")
        kind = match.lastgroup.rstrip("0123456789")
        if kind == "heredoc":
            raise LexError(f"line {text.count(chr(10), 0, at) + 1}: heredoc strings are not read")
        if kind != "space":
            out.append(Token(kind, match.group(), at))
        at = match.end()
    return out


def code(toks: list[Token]) -> list[Token]:
    """The tokens that are code: no comments."""
    return [t for t in toks if t.kind != "comment"]


def matching(toks: list[Token], at: int) -> int:
    """The index of the bracket closing the one at `at`; LexError if unbalanced."""
    stack: list[str] = []
    for i in range(at, len(toks)):
        text = toks[i].text if toks[i].kind == "op" else ""
        if text in OPEN:
            stack.append(OPEN[text])
        elif text in CLOSE:
            if not stack or stack.pop() != text:
                raise LexError(f"offset {toks[i].start}: unbalanced {text!r}")
            if not stack:
                return i
    raise LexError(f"offset {toks[at].start}: {toks[at].text!r} is never closed")


def split_top(toks: list[Token], separator: str) -> list[list[Token]]:
    """`toks` split at `separator` operators outside any bracket."""
    parts: list[list[Token]] = [[]]
    depth = 0
    for tok in toks:
        text = tok.text if tok.kind == "op" else ""
        if text in OPEN:
            depth += 1
        elif text in CLOSE:
            depth -= 1
        if depth == 0 and text == separator:
            parts.append([])
        else:
            parts[-1].append(tok)
    return parts
