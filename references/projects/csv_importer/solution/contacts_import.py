"""Import contacts from an uploaded CSV file (the reference solution)."""

import csv
import io
import re

_EMAIL = re.compile(r"[^@\s]+@[^@\s]+\.[^@\s]+")
_PHONE = re.compile(r"\+?[0-9 ()\-]{3,}")
_FORMULA_START = ("=", "+", "-", "@")


def _lines(text: str):
    """Physical lines with their start line numbers; CR, LF and CRLF all end a line."""
    return re.split(r"\r\n|\r|\n", text)


def _rows(text: str):
    """Yield (start_line, fields) for each non-blank record, honouring quotes."""
    physical = _lines(text)
    i = 0
    while i < len(physical):
        start = i
        chunk = physical[i]
        # A record continues while its quotes are unbalanced.
        while chunk.count('"') % 2 == 1 and i + 1 < len(physical):
            i += 1
            chunk += "\n" + physical[i]
        i += 1
        if not chunk.strip():
            continue
        fields = next(csv.reader(io.StringIO(chunk, newline=""), strict=False), [])
        yield start + 1, [f.strip() for f in fields]


def import_contacts(data: bytes) -> dict:
    if data.startswith(b"\xef\xbb\xbf"):
        data = data[3:]
    text = data.decode("utf-8", errors="surrogateescape")
    rows = _rows(text)
    header_row = next(rows, None)
    if header_row is None:
        return {"contacts": [], "errors": []}
    header = [h.lower() for h in header_row[1]]
    for required in ("name", "email"):
        if required not in header:
            raise ValueError(f"missing column: {required}")
    at = {name: header.index(name) for name in ("name", "email", "phone") if name in header}
    contacts, errors, seen = [], [], set()
    for line, fields in rows:
        reason = _reject(fields, len(header), at, seen)
        if reason:
            errors.append({"line": line, "reason": reason})
            continue
        name = fields[at["name"]]
        email = fields[at["email"]].lower()
        seen.add(email)
        if name.startswith(_FORMULA_START):
            name = "'" + name
        phone = fields[at["phone"]] if "phone" in at else ""
        contacts.append({"name": name, "email": email, "phone": phone})
    return {"contacts": contacts, "errors": errors}


def _reject(fields, width, at, seen):
    if any(_has_bad_bytes(f) for f in fields):
        return "invalid_encoding"
    if len(fields) != width:
        return "wrong_field_count"
    name, email = fields[at["name"]], fields[at["email"]]
    phone = fields[at["phone"]] if "phone" in at else ""
    if not name:
        return "missing_name"
    if not email:
        return "missing_email"
    if not _EMAIL.fullmatch(email):
        return "invalid_email"
    if phone and not _PHONE.fullmatch(phone):
        return "invalid_phone"
    if email.lower() in seen:
        return "duplicate_email"
    return ""


def _has_bad_bytes(text: str) -> bool:
    return any("\udc80" <= ch <= "\udcff" for ch in text)
