"""URL slugs."""

import re
import unicodedata

_NON_WORD = re.compile(r"[^a-z0-9]+")


def slugify(text: str, *, separator: str = "-", max_length: int | None = None) -> str:
    """Lower-case ASCII slug of `text`: accents stripped, runs of other characters
    become one `separator`, no separator at either end. `max_length` cuts at a
    separator boundary when possible."""
    ascii_text = unicodedata.normalize("NFKD", text).encode("ascii", "ignore").decode("ascii")
    slug = _NON_WORD.sub(separator, ascii_text.lower()).strip(separator)
    if max_length is not None and len(slug) > max_length:
        cut = slug[:max_length]
        if separator in cut and slug[max_length : max_length + len(separator)] != separator:
            cut = cut[: cut.rindex(separator)]
        slug = cut.strip(separator)
    return slug


def unique_slug(text: str, taken: set[str], *, separator: str = "-") -> str:
    """`slugify(text)`, with `-2`, `-3`, ... appended until it is not in `taken`."""
    base = slugify(text, separator=separator) or "item"
    candidate, n = base, 1
    while candidate in taken:
        n += 1
        candidate = f"{base}{separator}{n}"
    return candidate
