"""Import contacts from an uploaded CSV file."""


def import_contacts(data: bytes) -> dict:
    text = data.decode("utf-8")
    lines = text.split("\n")
    if not lines or not lines[0].strip():
        return {"contacts": [], "errors": []}
    header = [h.strip().lower() for h in lines[0].split(",")]
    for required in ("name", "email"):
        if required not in header:
            raise ValueError(f"missing column: {required}")
    contacts = []
    errors = []
    for number, line in enumerate(lines[1:], start=2):
        if not line.strip():
            continue
        values = [v.strip() for v in line.split(",")]
        row = dict(zip(header, values))
        name = row.get("name", "")
        email = row.get("email", "").lower()
        if not name:
            errors.append({"line": number, "reason": "missing_name"})
            continue
        if not email:
            errors.append({"line": number, "reason": "missing_email"})
            continue
        if "@" not in email:
            errors.append({"line": number, "reason": "invalid_email"})
            continue
        contacts.append({"name": name, "email": email, "phone": row.get("phone", "")})
    return {"contacts": contacts, "errors": errors}
