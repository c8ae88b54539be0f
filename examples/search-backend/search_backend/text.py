"""Turning text into terms, the same way for documents and queries."""

import re

# Identifiers split at underscores and dots, so "json.dumps" and "sort_keys" are two terms each.
_WORD = re.compile(r"[a-z][a-z0-9]+")

# The commonest English words, which say nothing about which document is meant.
_STOPWORD_TEXT = """
a an and are as at be been but by can do does for from has have if in into is it its may more
must no not of on or other same should so such than that the then there these this those to use
used uses using was were when where which while will with would you
"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())


def terms(text: str) -> list[str]:
    return [word for word in _WORD.findall(text.lower()) if word not in STOPWORDS]
