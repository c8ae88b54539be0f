"""The rankers the experiment compares. Each takes a query and returns its top k document ids.

They are written out here, each in a few lines over the shared index, rather than taken from a
package: the formulas are the point of the comparison and should be readable next to it, and the
example then needs nothing but the joust SDK.
"""

import math
from collections import Counter
from collections.abc import Sequence
from typing import Protocol

from .corpus import Document
from .index import Index
from .text import terms


class Ranker(Protocol):
    name: str

    def rank(self, query: str, k: int) -> list[str]: ...


class BM25:
    """Okapi BM25 (Robertson et al.): idf-weighted term counts that saturate (k1) and are
    normalised by document length (b), over the name, summary line and docstring."""

    name = "bm25"

    def __init__(self, index: Index, k1: float = 1.2, b: float = 0.75):
        self.index, self.k1, self.b = index, k1, b

    def idf(self, term: str) -> float:
        # The "+1" form of BM25's idf, which never goes negative for very common terms.
        n, df = self.index.size, self.index.document_frequency(term)
        return math.log(1 + (n - df + 0.5) / (df + 0.5))

    def rank(self, query: str, k: int) -> list[str]:
        index = self.index
        scores: dict[int, float] = {}
        for term in set(terms(query)):
            idf = self.idf(term)
            for number, count in index.postings.get(term, {}).items():
                norm = self.k1 * (1 - self.b + self.b * index.lengths[number] / index.average_length)
                scores[number] = scores.get(number, 0.0) + idf * count * (self.k1 + 1) / (count + norm)
        return index.top(scores, k)


class TfIdfCosine:
    """The vector-space model: cosine between (1 + log tf) * idf vectors of query and document.
    Its length normalisation is the whole vector's, so a long docstring that also covers the
    query's terms is pushed down more than BM25 pushes it."""

    name = "tfidf"

    def __init__(self, index: Index):
        self.index = index
        squares = [0.0] * index.size
        for term, postings in index.postings.items():
            idf = index.idf(term)
            for number, count in postings.items():
                squares[number] += ((1 + math.log(count)) * idf) ** 2
        self.norms = [math.sqrt(square) or 1.0 for square in squares]

    def rank(self, query: str, k: int) -> list[str]:
        index = self.index
        scores: dict[int, float] = {}
        for term, query_count in Counter(terms(query)).items():
            idf = index.idf(term)
            query_weight = (1 + math.log(query_count)) * idf
            for number, count in index.postings.get(term, {}).items():
                weight = (1 + math.log(count)) * idf
                scores[number] = scores.get(number, 0.0) + query_weight * weight / self.norms[number]
        return index.top(scores, k)


class TermCount:
    """A deliberately naive ranker: how often the query's terms occur, with no idf and no length
    normalisation, so long docstrings full of common words come first."""

    name = "term_count"

    def __init__(self, index: Index):
        self.index = index

    def rank(self, query: str, k: int) -> list[str]:
        scores: dict[int, float] = {}
        for term in set(terms(query)):
            for number, count in self.index.postings.get(term, {}).items():
                scores[number] = scores.get(number, 0.0) + count
        return self.index.top(scores, k)


class TitleMatch(BM25):
    """BM25 over the name and summary line only: what a search box that ignores the docstring's
    body would find."""

    name = "title"


def build_rankers(documents: Sequence[Document]) -> dict[str, Ranker]:
    full_text = Index(documents, lambda document: f"{document.title}\n{document.body}")
    titles = Index(documents, lambda document: document.title)
    rankers: list[Ranker] = [
        BM25(full_text),
        TfIdfCosine(full_text),
        TermCount(full_text),
        TitleMatch(titles),
    ]
    return {ranker.name: ranker for ranker in rankers}
