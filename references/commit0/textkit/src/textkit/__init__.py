"""Small text utilities: slugs, Roman numerals, wrapping, word statistics."""

from textkit.roman import from_roman, to_roman
from textkit.slug import slugify, unique_slug
from textkit.stats import WordStats, word_counts
from textkit.wrap import dedent_block, wrap

__all__ = [
    "WordStats",
    "dedent_block",
    "from_roman",
    "slugify",
    "to_roman",
    "unique_slug",
    "word_counts",
    "wrap",
]
