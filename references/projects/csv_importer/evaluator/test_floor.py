"""Floor checks: the plain contract any reasonable importer meets."""

import pytest
from contacts_import import import_contacts


def run(text: str) -> dict:
    return import_contacts(text.encode("utf-8"))


def test_plain_rows():
    out = run("name,email,phone\nAda Lovelace,ada@example.com,+44 20 7946 0000\nAlan,alan@example.org,\n")
    assert out == {
        "contacts": [
            {"name": "Ada Lovelace", "email": "ada@example.com", "phone": "+44 20 7946 0000"},
            {"name": "Alan", "email": "alan@example.org", "phone": ""},
        ],
        "errors": [],
    }


def test_header_any_order_and_case():
    out = run(" Email , NAME ,Phone\nada@example.com,Ada,123\n")
    assert out["contacts"] == [{"name": "Ada", "email": "ada@example.com", "phone": "123"}]


def test_phone_column_optional():
    out = run("name,email\nAda,ada@example.com\n")
    assert out["contacts"] == [{"name": "Ada", "email": "ada@example.com", "phone": ""}]


def test_extra_columns_ignored():
    out = run("id,name,email,notes\n7,Ada,ada@example.com,likes engines\n")
    assert out["contacts"] == [{"name": "Ada", "email": "ada@example.com", "phone": ""}]


def test_fields_trimmed():
    out = run("name,email\n   Ada  ,  ada@example.com \n")
    assert out["contacts"] == [{"name": "Ada", "email": "ada@example.com", "phone": ""}]


def test_email_lowercased():
    out = run("name,email\nAda,Ada.Lovelace@Example.COM\n")
    assert out["contacts"][0]["email"] == "ada.lovelace@example.com"


def test_missing_name_rejected():
    out = run("name,email\n,ada@example.com\nAlan,alan@example.org\n")
    assert out["errors"] == [{"line": 2, "reason": "missing_name"}]
    assert [c["name"] for c in out["contacts"]] == ["Alan"]


def test_missing_email_rejected():
    out = run("name,email\nAda,\n")
    assert out == {"contacts": [], "errors": [{"line": 2, "reason": "missing_email"}]}


@pytest.mark.parametrize("email", ["ada", "ada@", "@example.com", "ada@example", "a b@example.com"])
def test_invalid_email_rejected(email):
    out = run(f"name,email\nAda,{email}\n")
    assert out == {"contacts": [], "errors": [{"line": 2, "reason": "invalid_email"}]}


def test_blank_lines_skipped():
    out = run("name,email\n\nAda,ada@example.com\n   \n\nAlan,alan@example.org\n\n")
    assert [c["name"] for c in out["contacts"]] == ["Ada", "Alan"]
    assert out["errors"] == []


def test_empty_input_and_header_only():
    assert import_contacts(b"") == {"contacts": [], "errors": []}
    assert run("name,email,phone\n") == {"contacts": [], "errors": []}


def test_missing_column_raises():
    with pytest.raises(ValueError, match="missing column: email"):
        run("name,phone\nAda,123\n")
