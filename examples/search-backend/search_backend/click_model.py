"""What the simulated users want and how they click.

Known-item search: a user has one document in mind and types a few words of it, picked the way
people remember text: the more often the document uses a word, the likelier it comes to mind.
That document is the one relevant result; nothing else is.

Clicks follow the cascade model (Craswell et al. 2008) with the "navigational" parameters of the
online learning-to-rank literature (Hofmann et al. 2013, which joust's simulator also has): the
user reads the page top down, clicks a result with a probability that depends on its relevance,
and after a click stops reading with a probability that depends on it too. So a ranker that puts
the wanted document higher gets more of the clicks, and joust learns that from them alone.
"""

import random
from collections import Counter
from dataclasses import dataclass

from .corpus import Document
from .text import terms


@dataclass(frozen=True)
class CascadeClickModel:
    click_if_relevant: float = 0.95
    click_if_not: float = 0.05  # a snippet that looked right, or curiosity
    stop_if_relevant: float = 0.9  # found it
    stop_if_not: float = 0.2

    def clicks(self, shown: list[str], wanted: str, rng: random.Random) -> list[str]:
        clicked = []
        for doc_id in shown:
            relevant = doc_id == wanted
            if rng.random() < (self.click_if_relevant if relevant else self.click_if_not):
                clicked.append(doc_id)
                if rng.random() < (self.stop_if_relevant if relevant else self.stop_if_not):
                    break
        return clicked


def known_item_query(document: Document, rng: random.Random, words: tuple[int, ...] = (2, 3)) -> str:
    """A few distinct words of the document, each drawn in proportion to how often it occurs."""
    counts = Counter(terms(f"{document.title}\n{document.body}"))
    vocabulary, weights = list(counts), list(counts.values())
    wanted = min(rng.choice(words), len(vocabulary))
    query: list[str] = []
    while len(query) < wanted:
        word = rng.choices(vocabulary, weights)[0]
        if word not in query:
            query.append(word)
    return " ".join(query)
