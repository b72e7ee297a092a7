"""Signal checks: the real-file cases that separate a hardened importer from a naive one."""

import signal

import pytest
from contacts_import import import_contacts

HEADER = "name,email,phone\n"


def run(text: str) -> dict:
    return import_contacts(text.encode("utf-8"))


def test_quoted_commas():
    out = run("name,notes,email\n" + '"Lovelace, Ada","engines, looms",ada@example.com\n')
    assert out["contacts"] == [{"name": "Lovelace, Ada", "email": "ada@example.com", "phone": ""}]


def test_quoted_newlines():
    out = run(HEADER + '"Ada\nLovelace",ada@example.com,\nAlan,alan@example.org,\n')
    assert [c["name"] for c in out["contacts"]] == ["Ada\nLovelace", "Alan"]


def test_escaped_quotes():
    out = run(HEADER + '"Ada ""The Countess"" Lovelace",ada@example.com,\n')
    assert out["contacts"][0]["name"] == 'Ada "The Countess" Lovelace'


def test_byte_order_mark():
    out = import_contacts(b"\xef\xbb\xbf" + (HEADER + "Ada,ada@example.com,\n").encode())
    assert out["contacts"] == [{"name": "Ada", "email": "ada@example.com", "phone": ""}]


def test_crlf_line_endings():
    out = run("name,email,phone\r\nAda,ada@example.com,123\r\n\r\nAlan,,\r\n")
    assert out["contacts"] == [{"name": "Ada", "email": "ada@example.com", "phone": "123"}]
    assert out["errors"] == [{"line": 4, "reason": "missing_email"}]


def test_cr_line_endings():
    out = run("name,email\rAda,ada@example.com\rAlan,alan@example.org\r")
    assert [c["email"] for c in out["contacts"]] == ["ada@example.com", "alan@example.org"]


def test_invalid_bytes_row_salvaged():
    data = (HEADER + "Ada,ada@example.com,\n").encode() + b"Bj\xf6rn,bjorn@example.com,\n"
    data += "Grace,grace@example.com,\n".encode()
    out = import_contacts(data)
    assert [c["name"] for c in out["contacts"]] == ["Ada", "Grace"]
    assert out["errors"] == [{"line": 3, "reason": "invalid_encoding"}]


def test_wrong_field_count_salvaged():
    out = run(HEADER + "Ada,ada@example.com,1,extra\nAlan,alan@example.org\nGrace,grace@example.com,555 0100\n")
    assert out["errors"] == [
        {"line": 2, "reason": "wrong_field_count"},
        {"line": 3, "reason": "wrong_field_count"},
    ]
    assert [c["name"] for c in out["contacts"]] == ["Grace"]


def test_duplicate_emails():
    out = run(HEADER + "Ada,ada@example.com,\nAda Again,ADA@example.com,\nAlan,alan@example.org,\n")
    assert [c["name"] for c in out["contacts"]] == ["Ada", "Alan"]
    assert out["errors"] == [{"line": 3, "reason": "duplicate_email"}]


def test_error_lines_count_physical_lines():
    out = run(HEADER + '"Ada\nLovelace\nByron",ada@example.com,\nAlan,,\n')
    assert out["errors"] == [{"line": 5, "reason": "missing_email"}]


def test_reason_order():
    out = run(HEADER + ",,\nAda,ada@example.com,12a\n")
    assert out["errors"] == [
        {"line": 2, "reason": "missing_name"},
        {"line": 3, "reason": "invalid_phone"},
    ]


@pytest.mark.parametrize("phone", ["abc", "12", "+", "555-12x4"])
def test_invalid_phone(phone):
    out = run(HEADER + f"Ada,ada@example.com,{phone}\n")
    assert out["errors"] == [{"line": 2, "reason": "invalid_phone"}]


@pytest.mark.parametrize("name", ["=HYPERLINK(\"http://x\")", "+1+2", "-2+3", "@SUM(A1)"])
def test_formula_injection_neutralised(name):
    quoted = '"' + name.replace('"', '""') + '"'
    out = run(HEADER + f"{quoted},ada@example.com,\n")
    assert out["contacts"][0]["name"] == "'" + name


def test_other_injection_shapes_kept_verbatim():
    names = ["Robert'); DROP TABLE contacts;--", "<script>alert(1)</script>", "O'Brien"]
    text = HEADER + "".join(
        f'"{n}",user{i}@example.com,\n' for i, n in enumerate(names)
    )
    assert [c["name"] for c in run(text)["contacts"]] == names


def _timeout(signum, frame):
    raise TimeoutError("import took longer than the budget")


def test_large_file():
    rows = [f"Person {i},person{i % 90000}@example.com,+1 555 {i:07d}" for i in range(100000)]
    data = (HEADER + "\n".join(rows) + "\n").encode()
    previous = signal.signal(signal.SIGALRM, _timeout)
    signal.alarm(20)  # generous: a linear importer needs well under a second
    try:
        out = import_contacts(data)
    finally:
        signal.alarm(0)
        signal.signal(signal.SIGALRM, previous)
    assert len(out["contacts"]) == 90000
    assert len(out["errors"]) == 10000
    assert out["errors"][0] == {"line": 90002, "reason": "duplicate_email"}


def test_non_ascii_names_kept():
    out = run(HEADER + "Zoë Brontë,zoe@example.com,\n名前,namae@example.jp,\n")
    assert [c["name"] for c in out["contacts"]] == ["Zoë Brontë", "名前"]
