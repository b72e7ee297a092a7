import pytest

from textkit import WordStats, word_counts
from textkit.stats import words


def test_words_apostrophes_and_case():
    assert words("Don't STOP me_now, 42 times!") == ["don't", "stop", "me", "now", "42", "times"]


def test_word_counts_order():
    assert list(word_counts("b a b c a b").items()) == [("b", 3), ("a", 2), ("c", 1)]


def test_word_counts_empty():
    assert word_counts("...") == {}


def test_wordstats_feed_chains():
    stats = WordStats().feed("one two").feed("two three")
    assert (stats.total, stats.distinct, stats.longest) == (4, 3, "three")


def test_wordstats_mean_length():
    assert WordStats().feed("aa bbbb aa").mean_length() == pytest.approx(3.0)


def test_wordstats_empty_mean():
    assert WordStats().mean_length() == 0.0
