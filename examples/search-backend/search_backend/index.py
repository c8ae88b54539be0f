"""An inverted index: for each term, the documents that contain it and how often.

Every ranker scores from the same index, so the rankers differ only in their scoring formula,
which is what the experiment compares.
"""

import math
from collections import Counter
from collections.abc import Callable, Sequence

from .corpus import Document
from .text import terms


class Index:
    def __init__(self, documents: Sequence[Document], field: Callable[[Document], str]):
        self.ids = [document.id for document in documents]
        self.postings: dict[str, dict[int, int]] = {}  # term -> {document number: count}
        self.lengths: list[int] = []
        for number, document in enumerate(documents):
            counts = Counter(terms(field(document)))
            self.lengths.append(sum(counts.values()))
            for term, count in counts.items():
                self.postings.setdefault(term, {})[number] = count
        self.average_length = sum(self.lengths) / max(len(self.lengths), 1)

    @property
    def size(self) -> int:
        return len(self.ids)

    def document_frequency(self, term: str) -> int:
        return len(self.postings.get(term, {}))

    def idf(self, term: str) -> float:
        """Inverse document frequency, log(N / df); 0 for a term in no document."""
        df = self.document_frequency(term)
        return math.log(self.size / df) if df else 0.0

    def top(self, scores: dict[int, float], k: int) -> list[str]:
        """The k best-scored document ids; equal scores in corpus order, so results are stable."""
        best = sorted(scores.items(), key=lambda item: (-item[1], item[0]))[:k]
        return [self.ids[number] for number, score in best if score > 0]
