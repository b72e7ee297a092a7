"""Greedy word wrapping and block dedenting."""


def wrap(text: str, width: int) -> list[str]:
    """Split `text` into lines of at most `width` characters, breaking at spaces.
    A word longer than `width` is split across lines. Runs of whitespace collapse."""
    if width < 1:
        raise ValueError("width must be at least 1")
    lines: list[str] = []
    current = ""
    for word in text.split():
        while len(word) > width:
            if current:
                lines.append(current)
                current = ""
            lines.append(word[:width])
            word = word[width:]
        if not word:
            continue
        if not current:
            current = word
        elif len(current) + 1 + len(word) <= width:
            current += " " + word
        else:
            lines.append(current)
            current = word
    if current:
        lines.append(current)
    return lines


def dedent_block(text: str) -> str:
    """Remove the indentation common to all non-blank lines; blank lines become empty."""
    lines = text.split("\n")
    indents = [len(line) - len(line.lstrip(" ")) for line in lines if line.strip()]
    cut = min(indents) if indents else 0
    return "\n".join(line[cut:] if line.strip() else "" for line in lines)
